// A driver for the cluster suite's test of programs fetched from the control
// store. It attaches to the cluster named by PRISM_ADDRESS, deletes its own
// executable file, so that no node finds the program at its path, and runs
// tasks on the head's node and on a node with the resource "far". Prints
// "sum=N" and exits 0 once every task answered; prints the error and exits
// 1 otherwise.

#include <filesystem>
#include <iostream>
#include <vector>

#include <prism/prism.hpp>

namespace fetch_driver {

int triple(int x) {
  return 3 * x;
}

} // namespace fetch_driver

PRISM_REMOTE(fetch_driver::triple);

int main() {
  // A worker process of this program serves here and never returns.
  prism::init();
  try {
    std::filesystem::remove(std::filesystem::read_symlink("/proc/self/exe"));
    std::vector<prism::object_ref<int>> parts;
    for (int i = 0; i < 4; ++i) {
      parts.push_back(prism::task(fetch_driver::triple).remote(i));
      parts.push_back(prism::task(fetch_driver::triple)
                          .resources({{"CPU", 1}, {"far", 1}})
                          .remote(i));
    }
    int sum = 0;
    for (int part : prism::get(parts, std::chrono::seconds{120}))
      sum += part;
    std::cout << "sum=" << sum << std::endl;
    prism::shutdown();
    return 0;
  } catch (const std::exception& e) {
    std::cout << "failed: " << e.what() << std::endl;
    prism::shutdown();
    return 1;
  }
}
