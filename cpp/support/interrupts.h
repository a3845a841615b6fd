// Interrupts: long work in the core (auto-tuning) asks between steps whether
// the user asked to stop (Ctrl-C).
//
// In: a check installed by the bindings (it takes the GIL, runs Python's
// signal handlers and throws their exception, e.g. KeyboardInterrupt).
// Out: check_interrupts() throws that exception where the core calls it; with
// no check installed (C++ tests) it does nothing. Call it only from the
// thread that entered the core from Python, at points where stopping leaves
// every cache consistent.
#pragma once

#include <functional>

namespace nt {

void set_interrupt_check(std::function<void()> check);
void check_interrupts();

}  // namespace nt
