// A driver for the tests of jobs the cluster runs (`prism job submit`). It
// attaches to the cluster PRISM_ADDRESS names, prints its job id, starts an
// actor (a worker process the job holds while it runs) and prints the
// actor's pid, then runs rounds of 8 tasks, printing each round's sum, while
// the file GO does not exist. Then it prints "driver: done" and exits with
// CODE.
//
//   job_driver GO CODE

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>
#include <unistd.h>
#include <vector>

#include <prism/prism.hpp>

namespace job_driver {

int square(int x) {
  return x * x;
}

struct holder {
  static holder* create() {
    return new holder;
  }
  int pid() {
    return static_cast<int>(::getpid());
  }
};

} // namespace job_driver

PRISM_REMOTE(job_driver::square, job_driver::holder::create,
             &job_driver::holder::pid);

int main(int argc, char** argv) {
  // A worker process of this program serves here and never returns.
  prism::init();
  if (argc != 3) {
    std::fprintf(stderr, "usage: job_driver GO CODE\n");
    prism::shutdown();
    return 2;
  }
  std::string go = argv[1];
  int code = std::atoi(argv[2]);
  constexpr auto timeout = std::chrono::seconds{60};
  std::printf("driver: job_id=%u submitted_job=%s\n",
              prism::get_runtime_context().job.value,
              std::getenv("PRISM_SUBMITTED_JOB"));
  std::fflush(stdout);
  try {
    auto holder = prism::actor(job_driver::holder::create).remote();
    auto pid =
        prism::get(holder.task(&job_driver::holder::pid).remote(), timeout);
    std::printf("driver: actor pid=%d\n", pid);
    std::fflush(stdout);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "driver: no actor: %s\n", e.what());
  }
  for (int round = 0; !std::filesystem::exists(go); ++round) {
    try {
      std::vector<prism::object_ref<int>> refs;
      for (int i = 0; i < 8; ++i)
        refs.push_back(prism::task(job_driver::square).remote(round * 8 + i));
      long sum = 0;
      for (int x : prism::get(refs, timeout))
        sum += x;
      std::printf("round %d sum %ld\n", round, sum);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "round %d failed: %s\n", round, e.what());
    }
    std::fflush(stdout);
    std::fflush(stderr);
    // Paces the rounds (a few a second fill the logs the tests read); no
    // condition is awaited here.
    std::this_thread::sleep_for(std::chrono::milliseconds{100});
  }
  std::printf("driver: done\n");
  std::fflush(stdout);
  prism::shutdown();
  return code;
}
