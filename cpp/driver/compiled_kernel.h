// CompiledKernel: a traced kernel made runnable.
//
// In: the traced IR of one specialisation (parameter dtypes fixed). At
// construction it is verified, lowered (single-use Lets inlined) and turned
// into OpenCL C once. A launch binds the caller's tensors and scalars to the
// arranged parameters: sizes and strides (in elements) from the tensors,
// constexpr values by name, meta values from the configuration; checks that
// every arranged tensor has the same outermost shape; builds the program for
// that configuration (`-DNAME=value`, kept in the ProgramCache); wraps the
// tensors' memory and runs one program per element of the outermost shape.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <variant>
#include <vector>

#include "codegen/opencl/kernel_source.h"
#include "ir/ir.h"
#include "lower/program_layout.h"
#include "runtime/device.h"
#include "runtime/launch.h"

namespace nt {

struct TensorArg {
  void* data = nullptr;  // the element at index (0, ..., 0)
  std::vector<int64_t> shape;
  std::vector<int64_t> strides;  // in elements, any sign
};

struct ScalarArg {
  bool is_float = false;
  double float_value = 0;
  int64_t int_value = 0;
};

using LaunchArg = std::variant<TensorArg, ScalarArg>;
using SymbolValues = std::map<std::string, int64_t>;

class CompiledKernel {
 public:
  explicit CompiledKernel(const ir::Kernel& traced);

  const std::string& source() const { return source_.source; }
  const ir::Kernel& lowered() const { return lowered_; }
  // Symbols the caller must give by keyword, and those the compiler chooses.
  const std::vector<std::string>& constexpr_symbols() const { return constexpr_symbols_; }
  const std::vector<std::string>& meta_symbols() const { return meta_symbols_; }
  // The configuration used for meta symbols when none is given.
  const SymbolValues& default_config() const { return default_config_; }

  // Runs the kernel; returns the device time in seconds.
  double launch(const std::vector<LaunchArg>& args, const SymbolValues& constexpr_values,
                const std::optional<SymbolValues>& config = std::nullopt);

 private:
  struct Built {
    std::unique_ptr<KernelLauncher> launcher;
  };

  ir::Kernel lowered_;
  codegen::KernelSource source_;
  lower::ProgramLayout layout_{{}};
  std::map<std::string, SymbolAttrs> symbols_;  // constexpr/meta symbols the kernel needs
  std::vector<std::string> constexpr_symbols_, meta_symbols_;
  std::set<std::string> size_symbols_;  // sizes of the sources: bound from the tensors
  SymbolValues default_config_;
  std::vector<bool> written_;
  std::shared_ptr<Device> device_;
  std::map<std::string, Built> built_;  // by build options
};

}  // namespace nt
