// The helper process of tuning on PoCL (runtime/launch_replay.h): `_tuning_helper FD PARENT` replays
// the launches described in the file open as FD, from the queue it shares with the process PARENT
// and that process's other helpers, so that PoCL's kernel cache holds what they compile.
#include <cstdlib>
#include <string>

#include "runtime/launch_replay.h"

int main(int argc, char** argv) {
  if (argc != 3) return 2;
  return nt::replay_launches(std::atoi(argv[1]), static_cast<pid_t>(std::atol(argv[2])));
}
