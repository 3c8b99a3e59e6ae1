// Work that must survive node processes killed with SIGKILL and replaced,
// once a second: nested tasks that retry forever, and calls to actors that
// restart forever and retry their calls forever. Every result comes back
// right, and every node's CPUs are free again at the end.

#include <atomic>
#include <cstdint>
#include <random>
#include <regex>
#include <thread>
#include <utility>
#include <vector>

#include <boost/test/unit_test.hpp>

#include <prism/prism.hpp>

#include "prism_command.hpp"

namespace chaos_test {

using namespace prism::cluster_test;
using namespace std::chrono_literals;

namespace cluster_chaos {

constexpr auto result_timeout = std::chrono::seconds{120};

/// The sum of the leaves under a node of the tree: leaves are numbered
/// `base * 2^depth + i`.
std::int64_t expected_sum(int depth, std::int64_t base) {
  std::int64_t width = std::int64_t{1} << depth;
  return width * base * width + width * (width - 1) / 2;
}

/// Sums a tree of tasks: each inner node submits its two children (retried
/// forever) and waits for them.
std::int64_t tree_sum(int depth, std::int64_t base) {
  if (depth == 0) {
    // Stands in for computation, so that kills land while tasks run.
    std::this_thread::sleep_for(std::chrono::milliseconds{20});
    return base;
  }
  auto a = prism::task(tree_sum).max_retries(-1).remote(depth - 1, base * 2);
  auto b =
      prism::task(tree_sum).max_retries(-1).remote(depth - 1, base * 2 + 1);
  return prism::get(a, result_timeout) + prism::get(b, result_timeout);
}

/// Answers each call with its number, after a while of work, and counts
/// the calls its instance answered.
class echo {
public:
  static echo* create() {
    return new echo();
  }

  std::int64_t answer(std::int64_t number) {
    // Stands in for computation, so that kills land while calls run.
    std::this_thread::sleep_for(std::chrono::milliseconds{5});
    ++answered_;
    return number;
  }

private:
  std::int64_t answered_ = 0;
};

} // namespace cluster_chaos

PRISM_REMOTE(cluster_chaos::tree_sum);
PRISM_REMOTE(cluster_chaos::echo::create, &cluster_chaos::echo::answer);

using namespace cluster_chaos;

namespace {

/// Nodes the killer may take down.
const std::vector<std::string> spot_node{"--num-cpus", "2", "--resources",
                                         R"({"spot": 4})"};

constexpr std::size_t spot_nodes = 2;

/// Kills a random node process (never the head's) once a second and starts
/// a replacement, until it is destroyed.
class node_killer {
public:
  explicit node_killer(process_cluster& cluster, std::vector<std::size_t> nodes)
      : cluster_(cluster), nodes_(std::move(nodes)),
        thread_([this] { run(); }) {}

  ~node_killer() {
    stop_ = true;
    thread_.join();
  }

  int kills() const {
    return kills_.load();
  }

private:
  void run() {
    std::mt19937 rng{52090};
    while (!stop_) {
      // Time is the subject: a node dies once a second, whatever runs.
      std::this_thread::sleep_for(1s);
      if (stop_)
        break;
      std::uniform_int_distribution<std::size_t> pick{0, nodes_.size() - 1};
      auto i = pick(rng);
      cluster_.kill_node(nodes_[i]);
      nodes_[i] = cluster_.add_node(spot_node);
      ++kills_;
    }
  }

  process_cluster& cluster_;
  std::vector<std::size_t> nodes_;
  std::atomic<bool> stop_{false};
  std::atomic<int> kills_{0};
  std::thread thread_;
};

/// A head of one CPU and `spot_nodes` nodes of two, the driver attached;
/// dead nodes are declared so within a second of their connection's end.
struct chaos_cluster {
  chaos_cluster() {
    for (std::size_t i = 0; i < spot_nodes; ++i)
      nodes.push_back(cluster.add_node(spot_node));
  }

  static process_cluster::options options() {
    auto o = attached_cluster(0);
    o.flags = {"--heartbeat-interval-ms", "200", "--connection-timeout-ms",
               "2000"};
    return o;
  }

  /// Whether `prism status` shows every alive node with all its CPUs free.
  bool all_cpus_free() {
    auto r = cluster.run({"status"});
    if (r.status != 0)
      return false;
    static const std::regex used{R"(alive\s+CPU ([0-9.]+)/)"};
    bool any = false;
    for (std::sregex_iterator i{r.out.begin(), r.out.end(), used}, end;
         i != end; ++i) {
      any = true;
      if (std::stod((*i)[1].str()) != 0.0)
        return false;
    }
    return any;
  }

  process_cluster cluster{options()};
  std::vector<std::size_t> nodes;
};

/// Kills that each test waits to see while its work runs.
constexpr int min_kills = 4;
/// A bound on the work submitted while waiting for those kills.
constexpr int max_waves = 100;

} // namespace

BOOST_FIXTURE_TEST_SUITE(cluster_chaos_suite, chaos_cluster)

BOOST_AUTO_TEST_CASE(nested_tasks_finish_right_while_nodes_are_killed) {
  constexpr int depth = 2;
  constexpr int roots_per_wave = 4;
  int roots = 0;
  int wrong = 0;
  int kills = 0;
  {
    node_killer killer{cluster, nodes};
    for (int wave = 0; wave < max_waves && killer.kills() < min_kills; ++wave) {
      std::vector<prism::object_ref<std::int64_t>> refs;
      for (int r = 0; r < roots_per_wave; ++r)
        refs.push_back(
            prism::task(tree_sum).max_retries(-1).remote(depth, roots + r));
      for (int r = 0; r < roots_per_wave; ++r)
        if (prism::get(refs[r], result_timeout) !=
            expected_sum(depth, roots + r))
          ++wrong;
      roots += roots_per_wave;
    }
    kills = killer.kills();
  }
  BOOST_TEST_MESSAGE(roots << " trees of " << ((1 << (depth + 1)) - 1)
                           << " tasks, " << kills << " node kills");
  BOOST_TEST(kills >= min_kills);
  BOOST_TEST(wrong == 0);
  BOOST_TEST(eventually(30s, [&] { return all_cpus_free(); }),
             cluster.run({"status"}).out);
  BOOST_TEST(cluster.sanitizer_reports() == "");
}

// Ray's actor chaos test: actors that restart forever, whose calls retry
// forever, live on the nodes being killed; every numbered call is answered
// with its number, none lost and none mixed up.
BOOST_AUTO_TEST_CASE(actor_calls_all_answer_while_the_actors_nodes_are_killed) {
  constexpr int actors = 2;
  constexpr int calls_per_wave = 20;
  std::vector<prism::actor_handle<echo>> echoes;
  for (int i = 0; i < actors; ++i)
    echoes.push_back(prism::actor(echo::create)
                         .max_restarts(-1)
                         .max_task_retries(-1)
                         .resources({{"spot", 1}})
                         .remote());
  std::int64_t next = 0;
  int wrong = 0;
  int kills = 0;
  {
    node_killer killer{cluster, nodes};
    for (int wave = 0; wave < max_waves && killer.kills() < min_kills; ++wave) {
      std::vector<std::pair<std::int64_t, prism::object_ref<std::int64_t>>>
          calls;
      for (int c = 0; c < calls_per_wave; ++c) {
        auto& to = echoes[static_cast<std::size_t>(c % actors)];
        calls.emplace_back(next, to.task(&echo::answer).remote(next));
        ++next;
      }
      for (auto& [number, ref] : calls)
        if (prism::get(ref, result_timeout) != number)
          ++wrong;
    }
    kills = killer.kills();
  }
  BOOST_TEST_MESSAGE(next << " actor calls, " << kills << " node kills");
  BOOST_TEST(kills >= min_kills);
  BOOST_TEST(wrong == 0);
  // The actors live on.
  for (auto& e : echoes)
    BOOST_TEST(prism::get(e.task(&echo::answer).remote(-1), result_timeout) ==
               -1);
  BOOST_TEST(cluster.sanitizer_reports() == "");
}

BOOST_AUTO_TEST_SUITE_END()

} // namespace chaos_test
