// Strips of 16 elements (codegen/c/strips.h) written to a string: what goes before and inside each
// strip, and a streamed store's whole strips and last one.
#include "codegen/c/strips.h"

#include <gtest/gtest.h>

#include <string>

#include "string_writer.h"

namespace nt::codegen {
namespace {

using testing::StringWriter;

bool has(const std::string& text, const std::string& what) { return text.find(what) != std::string::npos; }

Strips plain(StringWriter& out) {
  Strips t;
  t.strip = "eo";
  t.index = "e";
  t.extent = "n";
  t.before = [&] { out.emit_line("NT_PREFETCH(&x[eo + 4096]);"); };
  t.body = [&] { out.emit_line("y[e] = x[e];"); };
  return t;
}

// The text between `#else` and `#endif` (a build with constant extents) and before `#else` (the
// runtime-meta form's).
std::string constant_form(const std::string& s) {
  const size_t from = s.find("#else\n") + 6;
  return s.substr(from, s.find("#endif\n") - from);
}
std::string runtime_form(const std::string& s) {
  const size_t from = s.find("#ifdef NT_RUNTIME_META\n") + 23;
  return s.substr(from, s.find("#else\n") - from);
}

TEST(Strips, EachStripRunsWhatGoesBeforeItThenItsSixteenElements) {
  StringWriter out;
  write_strips(out, plain(out));
  const std::string& s = out.text;
  EXPECT_EQ(out.indent, 0) << s;
  EXPECT_EQ(constant_form(s),
            "for (long eo = 0; eo < n; eo += 16) {\n"
            "  NT_PREFETCH(&x[eo + 4096]);\n"
            "  for (long e = eo; e < min(eo + 16L, (long)(n)); ++e) {\n"
            "    y[e] = x[e];\n"
            "  }\n"
            "}\n");
}

TEST(Strips, ARunTimeExtentHasItsWholeStripsInALoopOfTheirOwn) {
  StringWriter out;
  write_strips(out, plain(out));
  EXPECT_EQ(runtime_form(out.text),
            "for (long eo = 0; eo < (long)(n) / 16 * 16; eo += 16) {\n"
            "  NT_PREFETCH(&x[eo + 4096]);\n"
            "  for (long e = eo; e < eo + 16L; ++e) {\n"
            "    y[e] = x[e];\n"
            "  }\n"
            "}\n"
            "for (long eo = (long)(n) / 16 * 16; eo < n; eo += 16) {\n"
            "  NT_PREFETCH(&x[eo + 4096]);\n"
            "  for (long e = eo; e < (long)(n); ++e) {\n"
            "    y[e] = x[e];\n"
            "  }\n"
            "}\n");
}

TEST(Strips, ALoopPragmaComesJustBeforeEachStripLoop) {
  StringWriter out;
  Strips t = plain(out);
  t.hint = [&] { out.emit_line("#pragma clang loop vectorize_width(16)"); };
  write_strips(out, t);
  const std::string& s = out.text;
  size_t count = 0;
  for (size_t at = s.find("#pragma"); at != std::string::npos; at = s.find("#pragma", at + 1)) {
    ++count;
    const size_t next = s.find('\n', at) + 1;
    EXPECT_EQ(s.substr(s.find_first_not_of(' ', next), 4), "for ") << s;
  }
  EXPECT_EQ(count, 3u) << s;
}

TEST(Strips, AStreamedStoreWritesWholeStripsAroundTheCachesAndTheLastOneByElement) {
  StringWriter out;
  Strips t = plain(out);
  int lanes = 0;
  t.streamed = true;
  t.type = "float";
  t.global_pointer = "__global ";
  t.buffer = [] { return "nt_sbuf"; };
  t.lane = [&] {
    ++lanes;
    return "nt_l";
  };
  t.element_at = [](const std::string& lane) { return lane.empty() ? "&y[eo]" : "&y[eo + " + lane + "]"; };
  write_strips(out, t);
  const std::string& s = out.text;
  EXPECT_EQ(out.indent, 0) << s;
  EXPECT_EQ(lanes, 1);  // named once, for both forms
  const std::string store = "__builtin_nontemporal_store(vload16(0, nt_sbuf), (__global float16*)&y[eo]);";
  const std::string by_element = "for (long nt_l = 0; eo + nt_l < n; ++nt_l) {";
  const std::string constant = constant_form(s);
  size_t whole = constant.find("if (eo + 16 <= n) {");
  ASSERT_NE(whole, std::string::npos) << s;
  EXPECT_GT(whole, constant.find("y[e] = x[e];")) << s;  // after the strip's elements, inside its loop
  EXPECT_TRUE(has(constant, store)) << s;
  EXPECT_TRUE(has(constant, "} else {\n    " + by_element + "\n      *&y[eo + nt_l] = nt_sbuf[nt_l];")) << s;
  // The run-time form: whole strips stored whole, the last one by element, with no test.
  const std::string runtime = runtime_form(s);
  const size_t last = runtime.find("for (long eo = (long)(n) / 16 * 16;");
  EXPECT_FALSE(has(runtime, "if (eo + 16 <= n)")) << s;
  EXPECT_LT(runtime.find(store), last) << s;
  EXPECT_GT(runtime.find(by_element), last) << s;
}

}  // namespace
}  // namespace nt::codegen
