#include "driver/index_width.h"

#include <algorithm>
#include <cstdlib>
#include <string>

#include "runtime/program.h"

namespace nt {

namespace {

constexpr int64_t kIndex32Limit = int64_t{1} << 30;

}  // namespace

bool fits_index32(const std::vector<PlanParam>& params, const SymbolMap& values) {
  // The sizes of `shape`, each within the limit, and the product of all of them within it too.
  auto within = [&](const std::vector<Expr>& shape, int64_t& product, std::vector<int64_t>* sizes = nullptr) {
    for (const Expr& size : shape) {
      auto n = evaluate_int(size, values);
      if (!n || *n < 0 || *n > kIndex32Limit) return false;
      if (sizes) sizes->push_back(*n);
      product = std::min(product * std::max<int64_t>(*n, 1), kIndex32Limit + 1);  // at most 2^60 before
    }
    return product <= kIndex32Limit;
  };
  for (const PlanParam& p : params) {
    if (p.scalar) continue;
    if (p.jagged_dim >= 0 || p.stride_symbols.size() != p.source_shape.size()) return false;
    int64_t elements = 1, span = 0, programs = 1, block = 1;
    std::vector<int64_t> sizes;
    if (!within(p.source_shape, elements, &sizes) || !within(p.outer_shape, programs) ||
        !within(p.middle_shape, block) || !within(p.block_shape, block))
      return false;
    for (size_t d = 0; d < sizes.size(); ++d) {
      auto stride = values.find(p.stride_symbols[d]);
      if (stride == values.end() || !stride->second.as_int()) return false;
      const int64_t magnitude = std::abs(*stride->second.as_int());
      if (magnitude > kIndex32Limit) return false;
      span += std::max<int64_t>(sizes[d] - 1, 0) * magnitude;
      if (span > kIndex32Limit) return false;
    }
  }
  return true;
}

bool asks_index64(const std::string& options) {
  std::string before;
  for (size_t at = 0; at < options.size();) {
    const size_t start = options.find_first_not_of(" \t\n", at);
    if (start == std::string::npos) break;
    const size_t end = std::min(options.find_first_of(" \t\n", start), options.size());
    const std::string word = options.substr(start, end - start);
    const std::string name = word.starts_with("-D") ? word.substr(2) : before == "-D" ? word : "";
    if (name == "NT_NO_INDEX32" || name.starts_with("NT_NO_INDEX32=")) return true;
    before = word;
    at = end;
  }
  return false;
}

bool opencl_index64_asked() {
  static const bool asked = asks_index64(extra_opencl_options());
  return asked;
}

}  // namespace nt
