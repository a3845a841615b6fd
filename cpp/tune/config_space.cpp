#include "tune/config_space.h"

#include <algorithm>
#include <sstream>

namespace nt::tune {

std::vector<int64_t> symbol_values(const SymbolAttrs& attrs) {
  int64_t lo = attrs.lower_bound.value_or(1), hi = attrs.upper_bound.value_or(1024);
  std::vector<int64_t> values;
  for (int64_t v = 1; v <= hi && v > 0; v *= 2) {
    if (v >= lo) values.push_back(v);
  }
  if (!attrs.power_of_two) {
    values.push_back(lo);
    values.push_back(hi);
  }
  std::sort(values.begin(), values.end());
  values.erase(std::unique(values.begin(), values.end()), values.end());
  if (values.empty() && lo <= hi) values.push_back(lo);
  return values;
}

std::vector<Config> config_space(const std::vector<MetaSymbol>& symbols, const std::function<bool(const Config&)>& fits,
                                 size_t max_num_configs) {
  std::vector<Config> space{Config{}};
  for (const MetaSymbol& s : symbols) {
    std::vector<Config> next;
    for (const Config& partial : space) {
      for (int64_t v : symbol_values(s.attrs)) {
        Config c = partial;
        c[s.name] = v;
        next.push_back(std::move(c));
      }
    }
    space = std::move(next);
  }
  std::vector<Config> fitting;
  for (const Config& c : space) {
    if (fits(c)) fitting.push_back(c);
  }
  if (max_num_configs == 0 || fitting.size() <= max_num_configs) return fitting;
  std::vector<Config> kept;
  if (max_num_configs == 1) return {fitting[fitting.size() / 2]};
  for (size_t i = 0; i < max_num_configs; ++i) {
    size_t index = (i * (fitting.size() - 1) + (max_num_configs - 1) / 2) / (max_num_configs - 1);
    if (kept.empty() || kept.back() != fitting[index]) kept.push_back(fitting[index]);
  }
  return kept;
}

std::string format_config(const Config& config) {
  std::string text;
  for (const auto& [name, value] : config) text += (text.empty() ? "" : ",") + name + "=" + std::to_string(value);
  return text;
}

std::optional<Config> parse_config(const std::string& text) {
  Config config;
  std::stringstream stream(text);
  std::string item;
  while (std::getline(stream, item, ',')) {
    auto eq = item.find('=');
    if (eq == std::string::npos || eq == 0) return std::nullopt;
    try {
      size_t used = 0;
      int64_t value = std::stoll(item.substr(eq + 1), &used);
      if (used != item.size() - eq - 1) return std::nullopt;
      config[item.substr(0, eq)] = value;
    } catch (const std::exception&) {
      return std::nullopt;
    }
  }
  return config;
}

}  // namespace nt::tune
