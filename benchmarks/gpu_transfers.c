// Where a host-tensor launch's time goes on a discrete GPU, path by path (docs/performance.md,
// "Host tensors on a discrete GPU"): an add of 16M floats over OpenCL, its two inputs copied in
// and its output copied back, through
//   A  buffers created per call with CL_MEM_COPY_HOST_PTR (the runtime's path before pooling),
//   B  buffers kept, clEnqueueWriteBuffer/ReadBuffer from pageable memory,
//   C  buffers kept, through pinned memory (CL_MEM_ALLOC_HOST_PTR, mapped) filled by 1-8 threads,
//   D  the same in pieces of argv[1] MiB, the memcpy of one piece overlapping the DMA of the last,
//   E  CL_MEM_USE_HOST_PTR over pageable memory, mapped after the kernel,
//   F  memcpy between pageable buffers, 1-8 threads.
// On the lent NVIDIA machines (scripts/gpu/run.sh registers the driver first):
//   gcc -O2 benchmarks/gpu_transfers.c -I/usr/local/cuda/include -o /tmp/gpu_transfers
//       /usr/local/cuda/lib64/libOpenCL.so.1 -lpthread && /tmp/gpu_transfers 8
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <pthread.h>

static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + t.tv_nsec * 1e-9; }
#define CK(x) do { cl_int s_ = (x); if (s_) { printf("error %d at %s:%d\n", s_, __FILE__, __LINE__); exit(1);} } while (0)
static const char* src = "__kernel void add(__global const float* a, __global const float* b, __global float* c) { size_t i = get_global_id(0); c[i] = a[i] + b[i]; }";

typedef struct { char* dst; const char* src; size_t n; } Job;
static void* job(void* p) { Job* j = p; memcpy(j->dst, j->src, j->n); return 0; }
static void pmemcpy(void* dst, const void* s, size_t n, int threads) {
  pthread_t t[64]; Job j[64]; size_t chunk = (n + threads - 1) / threads;
  for (int i = 0; i < threads; ++i) { size_t lo = i * chunk, hi = lo + chunk > n ? n : lo + chunk; j[i] = (Job){(char*)dst + lo, (const char*)s + lo, hi > lo ? hi - lo : 0}; pthread_create(&t[i], 0, job, &j[i]); }
  for (int i = 0; i < threads; ++i) pthread_join(t[i], 0);
}

int main(int argc, char** argv) {
  size_t n = 16u << 20, bytes = n * 4;
  cl_device_id dev = NULL; cl_uint np;
  cl_platform_id plats[8]; CK(clGetPlatformIDs(8, plats, &np));
  for (cl_uint i = 0; i < np; ++i) { char name[256]; clGetPlatformInfo(plats[i], CL_PLATFORM_NAME, 256, name, 0); printf("platform %s\n", name);
    if (clGetDeviceIDs(plats[i], CL_DEVICE_TYPE_GPU, 1, &dev, 0) == 0) break; }
  if (!dev) { printf("no GPU\n"); return 1; }
  cl_bool unified = 0; clGetDeviceInfo(dev, CL_DEVICE_HOST_UNIFIED_MEMORY, sizeof unified, &unified, 0);
  printf("host unified memory: %d\n", unified);
  cl_int st; cl_context ctx = clCreateContext(0, 1, &dev, 0, 0, &st); CK(st);
  cl_command_queue q = clCreateCommandQueue(ctx, dev, 0, &st); CK(st);
  cl_program prog = clCreateProgramWithSource(ctx, 1, &src, 0, &st); CK(st);
  CK(clBuildProgram(prog, 1, &dev, "", 0, 0));
  cl_kernel k = clCreateKernel(prog, "add", &st); CK(st);
  float *a = malloc(bytes), *b = malloc(bytes), *c = malloc(bytes);
  for (size_t i = 0; i < n; ++i) { a[i] = i; b[i] = 1; c[i] = -1; }
  size_t g = n, l = 256;
  // A: today's path
  for (int it = 0; it < 4; ++it) {
    double t0 = now();
    cl_mem A = clCreateBuffer(ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, bytes, a, &st); CK(st);
    cl_mem B = clCreateBuffer(ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, bytes, b, &st); CK(st);
    cl_mem C = clCreateBuffer(ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, bytes, c, &st); CK(st);
    double t1 = now();
    clSetKernelArg(k, 0, sizeof A, &A); clSetKernelArg(k, 1, sizeof B, &B); clSetKernelArg(k, 2, sizeof C, &C);
    CK(clEnqueueNDRangeKernel(q, k, 1, 0, &g, &l, 0, 0, 0)); CK(clFinish(q));
    double t2 = now();
    CK(clEnqueueReadBuffer(q, C, CL_TRUE, 0, bytes, c, 0, 0, 0));
    double t3 = now();
    clReleaseMemObject(A); clReleaseMemObject(B); clReleaseMemObject(C);
    double t4 = now();
    printf("A copy_host_ptr: create+copy %.1f ms, kernel %.1f, read %.1f, release %.1f, total %.1f ms\n", (t1-t0)*1e3, (t2-t1)*1e3, (t3-t2)*1e3, (t4-t3)*1e3, (t4-t0)*1e3);
  }
  if (c[5] != 6) printf("WRONG %f\n", c[5]);
  // B: persistent device buffers, write/read from pageable memory
  cl_mem A = clCreateBuffer(ctx, CL_MEM_READ_WRITE, bytes, 0, &st); CK(st);
  cl_mem B = clCreateBuffer(ctx, CL_MEM_READ_WRITE, bytes, 0, &st); CK(st);
  cl_mem C = clCreateBuffer(ctx, CL_MEM_READ_WRITE, bytes, 0, &st); CK(st);
  clSetKernelArg(k, 0, sizeof A, &A); clSetKernelArg(k, 1, sizeof B, &B); clSetKernelArg(k, 2, sizeof C, &C);
  for (int it = 0; it < 4; ++it) {
    double t0 = now();
    CK(clEnqueueWriteBuffer(q, A, CL_FALSE, 0, bytes, a, 0, 0, 0));
    CK(clEnqueueWriteBuffer(q, B, CL_FALSE, 0, bytes, b, 0, 0, 0));
    CK(clFinish(q));
    double t1 = now();
    CK(clEnqueueNDRangeKernel(q, k, 1, 0, &g, &l, 0, 0, 0));
    CK(clEnqueueReadBuffer(q, C, CL_TRUE, 0, bytes, c, 0, 0, 0));
    double t2 = now();
    printf("B reused, pageable: write 2 %.1f ms, kernel+read %.1f, total %.1f ms\n", (t1-t0)*1e3, (t2-t1)*1e3, (t2-t0)*1e3);
  }
  // C: pinned staging (ALLOC_HOST_PTR mapped), memcpy with threads, DMA from pinned
  size_t chunk = (size_t)(argc > 1 ? atoi(argv[1]) : 8) << 20;
  cl_mem P = clCreateBuffer(ctx, CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR, 2 * bytes, 0, &st); CK(st);
  char* pinned = clEnqueueMapBuffer(q, P, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0, 2 * bytes, 0, 0, 0, &st); CK(st);
  for (int threads = 1; threads <= 8; threads *= 2) {
    for (int it = 0; it < 3; ++it) {
      double t0 = now();
      pmemcpy(pinned, a, bytes, threads); pmemcpy(pinned + bytes, b, bytes, threads);
      double t1 = now();
      CK(clEnqueueWriteBuffer(q, A, CL_FALSE, 0, bytes, pinned, 0, 0, 0));
      CK(clEnqueueWriteBuffer(q, B, CL_FALSE, 0, bytes, pinned + bytes, 0, 0, 0));
      CK(clFinish(q));
      double t2 = now();
      CK(clEnqueueNDRangeKernel(q, k, 1, 0, &g, &l, 0, 0, 0));
      CK(clEnqueueReadBuffer(q, C, CL_TRUE, 0, bytes, pinned, 0, 0, 0));
      double t3 = now();
      pmemcpy(c, pinned, bytes, threads);
      double t4 = now();
      printf("C pinned %d threads: memcpy in %.1f, dma in %.1f, kernel+dma out %.1f, memcpy out %.1f, total %.1f ms\n", threads, (t1-t0)*1e3, (t2-t1)*1e3, (t3-t2)*1e3, (t4-t3)*1e3, (t4-t0)*1e3);
    }
  }
  // D: pipelined chunks: memcpy chunk i into pinned while the DMA of chunk i-1 runs
  for (int threads = 1; threads <= 4; threads *= 2) for (int it = 0; it < 3; ++it) {
    double t0 = now();
    cl_mem dsts[2] = {A, B}; float* srcs[2] = {a, b};
    for (int t = 0; t < 2; ++t)
      for (size_t off = 0; off < bytes; off += chunk) {
        size_t m = off + chunk > bytes ? bytes - off : chunk;
        pmemcpy(pinned + t * bytes + off, (char*)srcs[t] + off, m, threads);
        CK(clEnqueueWriteBuffer(q, dsts[t], CL_FALSE, off, m, pinned + t * bytes + off, 0, 0, 0));
        clFlush(q);
      }
    CK(clEnqueueNDRangeKernel(q, k, 1, 0, &g, &l, 0, 0, 0));
    cl_event ev[64]; int ne = 0;
    for (size_t off = 0; off < bytes; off += chunk) {
      size_t m = off + chunk > bytes ? bytes - off : chunk;
      CK(clEnqueueReadBuffer(q, C, CL_FALSE, off, m, pinned + off, 0, 0, &ev[ne++]));
    }
    clFlush(q);
    ne = 0;
    for (size_t off = 0; off < bytes; off += chunk) {
      size_t m = off + chunk > bytes ? bytes - off : chunk;
      CK(clWaitForEvents(1, &ev[ne])); clReleaseEvent(ev[ne++]);
      pmemcpy((char*)c + off, pinned + off, m, threads);
    }
    double t1 = now();
    printf("D pipelined %zu MiB chunks, %d threads: total %.1f ms\n", chunk >> 20, threads, (t1-t0)*1e3);
  }
  if (c[5] != 6) printf("WRONG %f\n", c[5]);
  // E: USE_HOST_PTR over pageable memory + read back
  for (int it = 0; it < 3; ++it) {
    double t0 = now();
    cl_mem A2 = clCreateBuffer(ctx, CL_MEM_READ_WRITE | CL_MEM_USE_HOST_PTR, bytes, a, &st); CK(st);
    cl_mem B2 = clCreateBuffer(ctx, CL_MEM_READ_WRITE | CL_MEM_USE_HOST_PTR, bytes, b, &st); CK(st);
    cl_mem C2 = clCreateBuffer(ctx, CL_MEM_READ_WRITE | CL_MEM_USE_HOST_PTR, bytes, c, &st); CK(st);
    clSetKernelArg(k, 0, sizeof A2, &A2); clSetKernelArg(k, 1, sizeof B2, &B2); clSetKernelArg(k, 2, sizeof C2, &C2);
    CK(clEnqueueNDRangeKernel(q, k, 1, 0, &g, &l, 0, 0, 0));
    void* m = clEnqueueMapBuffer(q, C2, CL_TRUE, CL_MAP_READ, 0, bytes, 0, 0, 0, &st); CK(st);
    clEnqueueUnmapMemObject(q, C2, m, 0, 0, 0); clFinish(q);
    clReleaseMemObject(A2); clReleaseMemObject(B2); clReleaseMemObject(C2);
    double t1 = now();
    printf("E use_host_ptr: total %.1f ms\n", (t1-t0)*1e3);
  }
  // F: memcpy bandwidth pageable->pageable
  char* d = malloc(bytes); memset(d, 0, bytes);
  for (int threads = 1; threads <= 8; threads *= 2) { double t0 = now(); pmemcpy(d, a, bytes, threads); double t1 = now(); printf("F memcpy 64 MiB %d threads: %.1f ms\n", threads, (t1-t0)*1e3); }
  return 0;
}
