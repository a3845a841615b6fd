// The configuration space of a kernel's meta symbols.
//
// In: the meta symbols (with their bounds and power-of-two flag), a predicate
// saying whether a configuration fits the device (private memory, elements
// per block), and max_num_configs. Out: the candidate configurations: each
// symbol ranges over the powers of two within its bounds (plus the bounds
// themselves when power_of_two is false), the joint space is the product,
// configurations that do not fit are dropped, and when more remain than
// max_num_configs, that many are kept spread evenly over the space (always
// including its first and last). No meta symbols: one empty configuration.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "symbolic/expr.h"

namespace nt::tune {

using Config = std::map<std::string, int64_t>;

struct MetaSymbol {
  std::string name;
  SymbolAttrs attrs;
};

std::vector<int64_t> symbol_values(const SymbolAttrs& attrs);

std::vector<Config> config_space(const std::vector<MetaSymbol>& symbols, const std::function<bool(const Config&)>& fits,
                                 size_t max_num_configs);

// "A=64,B=128" and back (nullopt for text that is not such a list).
std::string format_config(const Config& config);
std::optional<Config> parse_config(const std::string& text);

}  // namespace nt::tune
