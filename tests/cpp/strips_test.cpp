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

TEST(Strips, EachStripRunsWhatGoesBeforeItThenItsSixteenElements) {
  StringWriter out;
  write_strips(out, plain(out));
  const std::string& s = out.text;
  EXPECT_EQ(out.indent, 0) << s;
  EXPECT_EQ(s,
            "for (long eo = 0; eo < n; eo += 16) {\n"
            "  NT_PREFETCH(&x[eo + 4096]);\n"
            "  for (long e = eo; e < min(eo + 16L, (long)(n)); ++e) {\n"
            "    y[e] = x[e];\n"
            "  }\n"
            "}\n");
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
  EXPECT_EQ(lanes, 1);
  size_t whole = s.find("if (eo + 16 <= n) {");
  ASSERT_NE(whole, std::string::npos) << s;
  EXPECT_GT(whole, s.find("y[e] = x[e];")) << s;  // after the strip's elements, inside its loop
  EXPECT_TRUE(has(s, "__builtin_nontemporal_store(vload16(0, nt_sbuf), (__global float16*)&y[eo]);")) << s;
  EXPECT_TRUE(has(
      s, "} else {\n    for (long nt_l = 0; eo + nt_l < n; ++nt_l) {\n      *&y[eo + nt_l] = nt_sbuf[nt_l];"))
      << s;
}

}  // namespace
}  // namespace nt::codegen
