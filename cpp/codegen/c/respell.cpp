#include <cctype>

#include "codegen/dialect.h"

namespace nt::codegen {

namespace {

bool is_name_char(char ch) { return std::isalnum(static_cast<unsigned char>(ch)) || ch == '_'; }

}  // namespace

std::string respell(std::string_view text, const Dialect& dialect) {
  // The shared text's words and what the dialect calls them; a word counts only where no
  // name character touches it on the left (`__global` in `__global__` is not one: its right
  // neighbour is checked through the trailing space in the word itself or a name character).
  const std::pair<std::string_view, std::string_view> words[] = {
      {"inline ", dialect.helper},
      {"__global ", dialect.global_pointer},
      {"__local ", dialect.local_pointer},
      {"__private ", dialect.private_pointer},
  };
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    bool replaced = false;
    if (i == 0 || !is_name_char(text[i - 1])) {
      for (const auto& [word, spelling] : words) {
        if (text.substr(i, word.size()) != word) continue;
        out += spelling;
        // `inline` -> a helper spelling without its separating space.
        if (word == "inline " && !spelling.empty()) out += ' ';
        i += word.size();
        replaced = true;
        break;
      }
    }
    if (!replaced) out += text[i++];
  }
  return out;
}

}  // namespace nt::codegen
