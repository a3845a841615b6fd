#include "tune/tuning_progress.h"

#include <cstdio>
#include <cstdlib>
#include <utility>

namespace nt::tune {

TuningProgress::TuningProgress(std::string kernel) : kernel_(std::move(kernel)) {
  if (const char* every = std::getenv("NINETOOTHED_PROGRESS_SECONDS")) {
    char* end = nullptr;
    const double seconds = std::strtod(every, &end);
    if (end != every && *end == '\0' && seconds >= 0) every_ = seconds;  // else the default
  }
}

void TuningProgress::built(size_t count) {
  built_ += count;
  maybe_say();
}

void TuningProgress::ahead(size_t total) {
  ++ahead_;
  if (const std::optional<double> seconds = due())
    std::fprintf(stderr,
                 "[ninetoothed] tuning %s: compiling %zu candidates ahead with helpers, %zu here, %.0f s\n",
                 kernel_.c_str(), total, ahead_, *seconds);
}

void TuningProgress::timed(double fastest) {
  ++timed_;
  fastest_ = fastest;
  maybe_say();
}

std::optional<double> TuningProgress::due() {
  const Clock::time_point now = Clock::now();
  if (std::chrono::duration<double>(now - said_).count() < every_) return std::nullopt;
  said_ = now;
  return std::chrono::duration<double>(now - start_).count();
}

void TuningProgress::maybe_say() {
  const std::optional<double> seconds = due();
  if (!seconds) return;
  std::string fastest = "none run yet";
  if (fastest_ < std::numeric_limits<double>::infinity()) fastest = std::to_string(fastest_ * 1e3) + " ms";
  std::fprintf(stderr, "[ninetoothed] tuning %s: %zu candidates built, %zu timed, %.0f s; fastest %s\n",
               kernel_.c_str(), built_, timed_, *seconds, fastest.c_str());
}

}  // namespace nt::tune
