#include "support/interrupts.h"

#include <utility>

namespace nt {

namespace {

std::function<void()>& installed_check() {
  static std::function<void()> check;
  return check;
}

}  // namespace

void set_interrupt_check(std::function<void()> check) { installed_check() = std::move(check); }

void check_interrupts() {
  if (const auto& check = installed_check()) check();
}

}  // namespace nt
