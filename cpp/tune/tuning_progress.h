// Tuning's progress on stderr: where tuning runs long (a GPU builds a dozen candidates or more, a
// minute or two), a line every few seconds says how far it is, so that a first call does not look
// hung.
//
// In: the kernel's name, then each step as tuning takes it (candidates built, compiled ahead by
// helper processes, timed). Out: a line on stderr where one is due: every
// NINETOOTHED_PROGRESS_SECONDS (default 5; 0 after every step) since the last.
#pragma once

#include <chrono>
#include <cstddef>
#include <limits>
#include <optional>
#include <string>

namespace nt::tune {

class TuningProgress {
 public:
  explicit TuningProgress(std::string kernel);
  void built(size_t count);
  void ahead(size_t total);  // one more candidate compiled ahead here (of `total`)
  void timed(double fastest);

 private:
  using Clock = std::chrono::steady_clock;
  // The seconds since tuning began, where a line is due (every_ since the last), else nothing.
  std::optional<double> due();
  void maybe_say();
  std::string kernel_;
  const Clock::time_point start_ = Clock::now();
  Clock::time_point said_ = start_;
  double every_ = 5.0;
  size_t built_ = 0, timed_ = 0, ahead_ = 0;
  double fastest_ = std::numeric_limits<double>::infinity();
};

}  // namespace nt::tune
