// A driver for the cluster suite's tests of worker output. It attaches to
// the cluster named by PRISM_ADDRESS (or, without it, starts an embedded
// cluster, with PRISM_WORKER_PROCESSES=1 one of worker processes), runs
// `workers` tasks at once that each print `lines` numbered lines at `rate`
// lines a second (every tenth also on stderr) and one line every worker
// prints alike, and an actor that prints a line. Then it prints the actor's
// id and "driver: tasks done" on its own stderr, has the actor print each
// line its stdin gives, and shuts down once its stdin closes (the test reads
// what arrived meanwhile).
//
//   output_driver WORKERS LINES RATE [hasty]
//
// With "hasty" it ends its job as soon as the tasks returned: no actor, no
// waiting for stdin.

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

#include <prism/prism.hpp>

namespace output_driver {

int shout(int worker, int lines, int rate) {
  using clock = std::chrono::steady_clock;
  auto start = clock::now();
  std::printf("every worker says this\n");
  for (int i = 0; i < lines; ++i) {
    std::printf("line w=%d i=%d\n", worker, i);
    if (i % 10 == 0)
      std::fprintf(stderr, "err w=%d i=%d\n", worker, i);
    // Paced: line i is due at start + i / rate (0: as fast as it can).
    if (rate > 0)
      std::this_thread::sleep_until(
          start + std::chrono::microseconds{std::int64_t{i} * 1000000 / rate});
  }
  return lines;
}

struct speaker {
  static speaker* create() {
    return new speaker;
  }
  std::string say(std::string what) {
    std::cout << "speaker says " << what << std::endl;
    return what;
  }
};

} // namespace output_driver

PRISM_REMOTE(output_driver::shout, output_driver::speaker::create,
             &output_driver::speaker::say);

int main(int argc, char** argv) {
  // A worker process of this program serves here and never returns.
  prism::init();
  if (argc != 4 && argc != 5) {
    std::fprintf(stderr, "usage: output_driver WORKERS LINES RATE [hasty]\n");
    prism::shutdown();
    return 2;
  }
  int workers = std::atoi(argv[1]);
  int lines = std::atoi(argv[2]);
  int rate = std::atoi(argv[3]);
  if (argc == 5) {
    std::vector<prism::object_ref<int>> refs;
    for (int w = 0; w < workers; ++w)
      refs.push_back(prism::task(output_driver::shout).remote(w, lines, rate));
    prism::get(refs, std::chrono::seconds{120});
    prism::shutdown();
    return 0;
  }
  int status = 0;
  try {
    std::vector<prism::object_ref<int>> refs;
    for (int w = 0; w < workers; ++w)
      refs.push_back(prism::task(output_driver::shout).remote(w, lines, rate));
    auto speaker = prism::actor(output_driver::speaker::create).remote();
    auto said =
        speaker.task(&output_driver::speaker::say).remote(std::string{"hello"});
    int total = 0;
    for (int n : prism::get(refs, std::chrono::seconds{120}))
      total += n;
    prism::get(said, std::chrono::seconds{60});
    std::fprintf(stderr, "driver: actor %s\n", speaker.id().hex().c_str());
    std::fprintf(stderr, "driver: tasks done, %d lines\n", total);
    std::fflush(stderr);
    // Each line of stdin is said by the actor, until stdin closes.
    for (std::string line; std::getline(std::cin, line);)
      prism::get(speaker.task(&output_driver::speaker::say).remote(line),
                 std::chrono::seconds{60});
  } catch (const std::exception& e) {
    std::fprintf(stderr, "driver: failed: %s\n", e.what());
    status = 1;
    std::fflush(stderr);
    for (std::string line; std::getline(std::cin, line);) {
    }
  }
  prism::shutdown();
  return status;
}
