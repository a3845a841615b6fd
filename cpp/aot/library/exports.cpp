// Compiled into every ahead-of-time library (not into the core): the
// functions ninetoothed.h declares for C callers, over the library's own
// copy of the runtime.
#include "aot_runtime.h"

#define NINETOOTHED_EXPORT extern "C" __attribute__((visibility("default")))

NINETOOTHED_EXPORT const char* ninetoothed_error_string(int code) {
  return ninetoothed_aot_error_string(code);
}

NINETOOTHED_EXPORT const char* ninetoothed_last_error_message(void) { return ninetoothed_aot_last_error(); }
