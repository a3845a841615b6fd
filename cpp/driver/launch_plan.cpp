// LaunchPlan as text and back.
//
// The text is line-based, one record per line, fields separated by tabs:
// expressions are Python source (symbolic/printer), read back by the
// symbolic parser; the OpenCL C comes last, after a line giving its length
// in bytes. The first line names the format and its version.
#include "driver/launch_plan.h"

#include <charconv>
#include <cstdio>

#include "support/errors.h"
#include "symbolic/parser.h"
#include "symbolic/printer.h"

namespace nt {

namespace {

constexpr const char* kMagic = "ninetoothed-launch-plan 2";
// Plans of libraries built before parameters said whether the kernel reads or
// overwrites them: read as read and not overwritten (always copied in).
constexpr const char* kMagicVersion1 = "ninetoothed-launch-plan 1";

std::string optional_text(const std::optional<int64_t>& v) { return v ? std::to_string(*v) : "-"; }

// (Plain strings, not streams: numbers through an ostream take the global
// locale's facets, which another C++ runtime loaded into the process, e.g.
// torch's, can own.)
void put_exprs(std::string& out, const char* tag, const std::vector<Expr>& exprs) {
  out += tag;
  for (const Expr& e : exprs) out += '\t' + to_python(e);
  out += '\n';
}

void put_names(std::string& out, const char* tag, const std::vector<std::string>& names) {
  out += tag;
  for (const std::string& n : names) out += '\t' + n;
  out += '\n';
}

std::string flag(bool b) { return b ? "1" : "0"; }

std::vector<std::string> split_tabs(const std::string& line) {
  std::vector<std::string> fields;
  size_t start = 0;
  while (true) {
    size_t tab = line.find('\t', start);
    fields.push_back(line.substr(start, tab - start));
    if (tab == std::string::npos) break;
    start = tab + 1;
  }
  return fields;
}

class Reader {
 public:
  explicit Reader(const std::string& text) : text_(text) {}

  bool at_end() const { return pos_ >= text_.size(); }
  int line_number() const { return line_; }

  std::vector<std::string> next_record() {
    if (at_end()) fail("unexpected end");
    size_t nl = text_.find('\n', pos_);
    if (nl == std::string::npos) fail("a record without a line end");
    std::string line = text_.substr(pos_, nl - pos_);
    pos_ = nl + 1;
    ++line_;
    return split_tabs(line);
  }
  std::string take_bytes(size_t n) {
    if (text_.size() - pos_ < n) fail("the source is shorter than its length says");
    std::string bytes = text_.substr(pos_, n);
    pos_ += n;
    return bytes;
  }
  [[noreturn]] void fail(const std::string& why) const {
    throw ValueError("not a NineToothed launch plan (line " + std::to_string(line_) + "): " + why);
  }

  int64_t integer(const std::string& field) const {
    int64_t v = 0;
    auto [end, ec] = std::from_chars(field.data(), field.data() + field.size(), v);
    if (ec != std::errc() || end != field.data() + field.size()) fail("'" + field + "' is not an integer");
    return v;
  }
  double real(const std::string& field) const {  // locale-independent, as written by %.17g
    double v = 0;
    auto [end, ec] = std::from_chars(field.data(), field.data() + field.size(), v);
    if (ec != std::errc() || end != field.data() + field.size()) fail("'" + field + "' is not a number");
    return v;
  }
  bool flag(const std::string& field) const {
    if (field != "0" && field != "1") fail("'" + field + "' is not 0 or 1");
    return field == "1";
  }
  std::optional<int64_t> optional_integer(const std::string& field) const {
    if (field == "-") return std::nullopt;
    return integer(field);
  }
  Expr expr(const std::string& field) const {
    try {
      return parse_python_expr(field);
    } catch (const std::exception& e) {
      fail(std::string("bad expression: ") + e.what());
    }
  }

 private:
  const std::string& text_;
  size_t pos_ = 0;
  int line_ = 0;
};

void expect_fields(const Reader& r, const std::vector<std::string>& f, size_t n) {
  if (f.size() != n)
    r.fail("'" + f[0] + "' has " + std::to_string(f.size() - 1) + " fields, not " + std::to_string(n - 1));
}

}  // namespace

std::string format_launch_plan(const LaunchPlan& plan) {
  for (const PlanParam& p : plan.params) {
    if (p.jagged_dim >= 0)
      throw ValueError("'" + p.name +
                       "' is a jagged tensor; ahead-of-time libraries take dense tensors only");
  }
  std::string out = std::string(kMagic) + '\n';
  out += "kernel\t" + plan.source.name + '\n';
  out += "grid\t" + std::to_string(plan.grid_param) + '\n';
  out += "private_bytes\t" + to_python(plan.source.private_bytes) + '\n';
  if (plan.source.work_group_capable) out += "work_group\t1\n";
  if (!plan.source.local_bytes.is_int(0)) out += "local_bytes\t" + to_python(plan.source.local_bytes) + '\n';
  if (!plan.source.workspace_bytes.is_int(0))
    out += "workspace_bytes\t" + to_python(plan.source.workspace_bytes) + '\n';
  if (!plan.source.workspace_flag_bytes.is_int(0))
    out += "workspace_flag_bytes\t" + to_python(plan.source.workspace_flag_bytes) + '\n';
  for (const auto& [name, a] : plan.source.symbols) {
    out += "symbol\t" + name + '\t' + flag(a.constexpr_) + '\t' + flag(a.meta) + '\t' +
           optional_text(a.lower_bound) + '\t' + optional_text(a.upper_bound) + '\t' + flag(a.power_of_two) +
           '\n';
  }
  put_names(out, "constexpr_symbols", plan.constexpr_symbols);
  put_names(out, "meta_symbols", plan.meta_symbols);
  put_names(out, "block_size_symbols", plan.block_size_symbols);
  for (const auto& [name, value] : plan.default_config)
    out += "default\t" + name + '\t' + std::to_string(value) + '\n';
  for (const PlanParam& p : plan.params) {
    out += "param\t" + p.name + '\t' + std::string(dtype_name(p.dtype)) + '\t' + flag(p.scalar) + '\t' +
           flag(p.constexpr_) + '\t' + flag(p.written) + '\t' + flag(p.has_outer_level) + '\t' +
           flag(p.read) + '\t' + flag(p.overwritten) + '\n';
    put_exprs(out, "source_shape", p.source_shape);
    put_names(out, "strides", p.stride_symbols);
    put_exprs(out, "outer_shape", p.outer_shape);
    put_exprs(out, "middle_shape", p.middle_shape);
    put_exprs(out, "block_shape", p.block_shape);
  }
  if (plan.num_warps) out += "num_warps\t" + std::to_string(plan.num_warps) + '\n';
  for (const auto& [index, value] : plan.fixed_scalars) {
    char text[64];
    std::snprintf(text, sizeof text, "%.17g", value);
    out += "fixed\t" + std::to_string(index) + '\t' + text + '\n';
  }
  for (const codegen::KernelArg& a : plan.source.args) {
    out += "arg\t" + std::to_string(static_cast<int>(a.kind)) + '\t' + std::to_string(a.param) + '\t' +
           std::to_string(a.dim) + '\t' + (a.symbol.empty() ? "-" : a.symbol) + '\n';
  }
  out += "source\t" + std::to_string(plan.source.source.size()) + '\n' + plan.source.source;
  if (const auto& cuda = plan.cuda_source) {
    out += "cuda_kernel\t" + cuda->name + '\n';
    out += "cuda_work_group\t" + flag(cuda->work_group_capable) + '\n';
    out += "cuda_local_bytes\t" + to_python(cuda->local_bytes) + '\n';
    out += "cuda_source\t" + std::to_string(cuda->source.size()) + '\n' + cuda->source;
  }
  return out;
}

LaunchPlan parse_launch_plan(const std::string& text) {
  Reader r(text);
  LaunchPlan plan;
  const std::vector<std::string> magic = r.next_record();
  const bool version1 = magic == std::vector<std::string>{kMagicVersion1};
  if (magic != std::vector<std::string>{kMagic} && !version1)
    r.fail("the first line is not '" + std::string(kMagic) + "'");
  auto names_of = [](const std::vector<std::string>& f) {
    return std::vector<std::string>(f.begin() + 1, f.end());
  };
  auto exprs_of = [&](const std::vector<std::string>& f) {
    std::vector<Expr> exprs;
    for (size_t i = 1; i < f.size(); ++i) exprs.push_back(r.expr(f[i]));
    return exprs;
  };
  PlanParam* param = nullptr;
  while (true) {
    std::vector<std::string> f = r.next_record();
    const std::string& tag = f[0];
    if (tag == "kernel") {
      expect_fields(r, f, 2);
      plan.source.name = f[1];
    } else if (tag == "grid") {
      expect_fields(r, f, 2);
      plan.grid_param = static_cast<int>(r.integer(f[1]));
    } else if (tag == "private_bytes") {
      expect_fields(r, f, 2);
      plan.source.private_bytes = r.expr(f[1]);
    } else if (tag == "local_bytes") {
      expect_fields(r, f, 2);
      plan.source.local_bytes = r.expr(f[1]);
    } else if (tag == "workspace_bytes") {
      expect_fields(r, f, 2);
      plan.source.workspace_bytes = r.expr(f[1]);
    } else if (tag == "workspace_flag_bytes") {
      expect_fields(r, f, 2);
      plan.source.workspace_flag_bytes = r.expr(f[1]);
    } else if (tag == "work_group") {
      expect_fields(r, f, 2);
      plan.source.work_group_capable = r.flag(f[1]);
    } else if (tag == "symbol") {
      expect_fields(r, f, 7);
      plan.source.symbols[f[1]] = SymbolAttrs{r.flag(f[2]), r.flag(f[3]), r.optional_integer(f[4]),
                                              r.optional_integer(f[5]), r.flag(f[6])};
    } else if (tag == "constexpr_symbols") {
      plan.constexpr_symbols = names_of(f);
    } else if (tag == "meta_symbols") {
      plan.meta_symbols = names_of(f);
    } else if (tag == "block_size_symbols") {
      plan.block_size_symbols = names_of(f);
    } else if (tag == "default") {
      expect_fields(r, f, 3);
      plan.default_config[f[1]] = r.integer(f[2]);
    } else if (tag == "param") {
      expect_fields(r, f, version1 ? 7 : 9);
      auto dtype = dtype_from_name(f[2]);
      if (!dtype) r.fail("unknown dtype '" + f[2] + "'");
      PlanParam p;
      p.name = f[1];
      p.dtype = *dtype;
      p.scalar = r.flag(f[3]);
      p.constexpr_ = r.flag(f[4]);
      p.written = r.flag(f[5]);
      p.has_outer_level = r.flag(f[6]);
      p.read = version1 || r.flag(f[7]);
      p.overwritten = !version1 && r.flag(f[8]);
      plan.params.push_back(std::move(p));
      param = &plan.params.back();
    } else if (tag == "source_shape" || tag == "strides" || tag == "outer_shape" || tag == "middle_shape" ||
               tag == "block_shape") {
      if (!param) r.fail("'" + tag + "' before any 'param'");
      if (tag == "source_shape") param->source_shape = exprs_of(f);
      if (tag == "strides") param->stride_symbols = names_of(f);
      if (tag == "outer_shape") param->outer_shape = exprs_of(f);
      if (tag == "middle_shape") param->middle_shape = exprs_of(f);
      if (tag == "block_shape") param->block_shape = exprs_of(f);
    } else if (tag == "num_warps") {
      expect_fields(r, f, 2);
      const int64_t n = r.integer(f[1]);
      if (n < 1) r.fail("num_warps must be at least 1");
      plan.num_warps = static_cast<size_t>(n);
    } else if (tag == "fixed") {
      expect_fields(r, f, 3);
      plan.fixed_scalars[static_cast<int>(r.integer(f[1]))] = r.real(f[2]);
    } else if (tag == "arg") {
      expect_fields(r, f, 5);
      int64_t kind = r.integer(f[1]);
      if (kind < 0 || kind > static_cast<int>(codegen::KernelArg::Kind::WorkspaceOn))
        r.fail("unknown argument kind");
      plan.source.args.push_back({static_cast<codegen::KernelArg::Kind>(kind),
                                  static_cast<int>(r.integer(f[2])), static_cast<int>(r.integer(f[3])),
                                  f[4] == "-" ? "" : f[4]});
    } else if (tag == "source") {
      expect_fields(r, f, 2);
      plan.source.source = r.take_bytes(static_cast<size_t>(r.integer(f[1])));
      if (r.at_end()) break;
    } else if (tag == "cuda_kernel" || tag == "cuda_work_group" || tag == "cuda_local_bytes") {
      expect_fields(r, f, 2);
      if (!plan.cuda_source) {
        plan.cuda_source = codegen::KernelSource{};
        plan.cuda_source->args = plan.source.args;
        plan.cuda_source->symbols = plan.source.symbols;
        plan.cuda_source->private_bytes = plan.source.private_bytes;
      }
      if (tag == "cuda_kernel") plan.cuda_source->name = f[1];
      if (tag == "cuda_work_group") plan.cuda_source->work_group_capable = r.flag(f[1]);
      if (tag == "cuda_local_bytes") plan.cuda_source->local_bytes = r.expr(f[1]);
    } else if (tag == "cuda_source") {
      expect_fields(r, f, 2);
      if (!plan.cuda_source) r.fail("'cuda_source' before 'cuda_kernel'");
      plan.cuda_source->source = r.take_bytes(static_cast<size_t>(r.integer(f[1])));
      break;
    } else {
      r.fail("unknown record '" + tag + "'");
    }
  }
  if (!r.at_end()) r.fail("text after the source");
  // Every index the plan holds must be in range: a launch trusts them.
  int n = static_cast<int>(plan.params.size());
  if (plan.grid_param < -1 || plan.grid_param >= n) r.fail("the grid parameter is out of range");
  for (const codegen::KernelArg& a : plan.source.args) {
    const bool workspace =
        a.kind == codegen::KernelArg::Kind::Workspace || a.kind == codegen::KernelArg::Kind::WorkspaceOn;
    if (workspace ? a.param != -1 : a.param < 0 || a.param >= n)
      r.fail("an argument names parameter " + std::to_string(a.param));
  }
  for (const auto& [index, value] : plan.fixed_scalars) {
    if (index < 0 || index >= n) r.fail("a fixed value names parameter " + std::to_string(index));
  }
  for (const PlanParam& p : plan.params) {
    if (p.stride_symbols.size() != p.source_shape.size())
      r.fail("'" + p.name + "' has strides of another rank");
  }
  return plan;
}

}  // namespace nt
