// Work bigger than the cluster: tasks of 8 CPUs each, sent to a cluster
// whose head has fewer. Run against a head started with an autoscaler
// (README, "Autoscaler"):
//
//   prism start --head --num-cpus 2 --autoscaler autoscaler.json
//   PRISM_ADDRESS=127.0.0.1:6380 build/release/examples/autoscaling 40
//
// The autoscaler launches nodes of 8 CPUs for them; the program prints on
// which nodes its tasks ran. Once they are done, the nodes go when idle.
#include <chrono>
#include <cstdlib>
#include <iostream>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include <prism/prism.hpp>

/// Eight CPUs' worth of work for a while; says where it ran.
std::string crunch(int ms) {
  std::this_thread::sleep_for(std::chrono::milliseconds{ms});
  return prism::get_runtime_context().node.hex().substr(0, 8);
}

PRISM_REMOTE(crunch);

int main(int argc, char** argv) {
  // Worker processes of this program start here: they serve and exit.
  prism::init();
  int tasks = argc > 1 ? std::atoi(argv[1]) : 40;
  std::vector<prism::object_ref<std::string>> refs;
  for (int i = 0; i < tasks; ++i)
    refs.push_back(
        prism::task(crunch).resources({{"CPU", 8}}).max_retries(5).remote(500));
  std::map<std::string, int> per_node;
  for (const auto& node : prism::get(refs, std::chrono::minutes{10}))
    ++per_node[node];
  std::cout << tasks << " tasks of 8 CPUs ran on " << per_node.size()
            << " nodes:\n";
  for (const auto& [node, n] : per_node)
    std::cout << "  node " << node << ": " << n << " tasks\n";
  prism::shutdown();
}
