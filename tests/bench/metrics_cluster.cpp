// Cluster mode: the driver (this program), the head and nodes as processes
// of their own on loopback, started with the `prism` command. Tasks and
// actor calls cross from the driver to worker processes that the nodes start
// from this very program (main serves as a worker first).

#include <algorithm>
#include <arpa/inet.h>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <netinet/in.h>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <sys/socket.h>
#include <thread>
#include <unistd.h>
#include <utility>
#include <vector>

#include <prism/prism.hpp>
#include <prism/testing.hpp>

#include "bench.hpp"

namespace prism::bench {

namespace {

using clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

constexpr auto result_timeout = std::chrono::seconds{120};

/// How long `worker_process_start_ms` lets a node settle before a job.
constexpr auto settle_time = std::chrono::milliseconds{500};

int cluster_small_value() {
  return 0;
}

/// A value of `mb` megabytes, kept in the object store of the node that
/// runs this.
std::string cluster_big_value(int mb) {
  return std::string(static_cast<std::size_t>(mb) << 20, 'x');
}

/// Wall-clock time in milliseconds, as every process on this host reads it.
std::int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

/// Notes in the key-value table when each attempt started and the pid of
/// the node process that runs it, then runs long enough for that node to be
/// killed under it.
int cluster_note_attempt(int run) {
  auto attempt = prism::get_runtime_context().attempt;
  prism::kv::put("run-" + std::to_string(run) + "-attempt-" +
                     std::to_string(attempt),
                 std::to_string(now_ms()) + " " +
                     std::to_string(static_cast<int>(::getppid())),
                 true, "bench");
  // Time is the subject: the first attempt must still run when its node
  // is killed, well after the driver has read this note.
  if (attempt == 0)
    std::this_thread::sleep_for(30s);
  return attempt;
}

class cluster_counter {
public:
  static cluster_counter* create() {
    return new cluster_counter;
  }

  int add(int x) {
    total_ += x;
    return total_;
  }

private:
  int total_ = 0;
};

PRISM_REMOTE(cluster_small_value, cluster_big_value, cluster_note_attempt,
             cluster_counter::create, &cluster_counter::add);

/// The cluster every cluster metric runs on, started on first use and kept
/// for the rest of the run: a head and one node of two CPUs each, this
/// process attached as the driver. The node offers "far", so a task that
/// asks for it runs there and not on the head's node, which the driver
/// leases from.
/// With `tls`, every process of it speaks mutual TLS, with certificates
/// made by `prism cert` for the run.
struct bench_cluster {
  explicit bench_cluster(bool with_tls)
      : tls(with_tls),
        certs(with_tls ? make_certificates() : ""), cluster{options(certs)} {}

  ~bench_cluster() {
    if (!certs.empty())
      std::filesystem::remove_all(certs);
  }

  /// A directory with a cluster CA and the certificates "127.0.0.1" (the
  /// nodes) and "driver".
  static std::string make_certificates() {
    char pattern[] = "/tmp/prism-bench-certs-XXXXXX";
    std::string dir = ::mkdtemp(pattern);
    auto bare = options("");
    bare.head = false;
    bare.attach = false;
    testing::process_cluster s{bare};
    for (auto args : std::vector<std::vector<std::string>>{
             {"cert", "init", dir + "/ca"},
             {"cert", "issue", dir + "/ca", "127.0.0.1"},
             {"cert", "issue", dir + "/ca", "driver"}})
      expect(s.run(args).status == 0, "prism cert failed");
    return dir;
  }

  static testing::process_cluster::options options(const std::string& certs) {
    testing::process_cluster::options o;
    o.command = PRISM_TOOL_PATH;
    o.cpus = 2;
    if (!certs.empty()) {
      auto ca = certs + "/ca/";
      o.flags = {"--tls-cert",         ca + "127.0.0.1.pem", "--tls-key",
                 ca + "127.0.0.1.key", "--tls-ca",           ca + "ca.pem"};
      o.driver.tls_cert = ca + "driver.pem";
      o.driver.tls_key = ca + "driver.key";
      o.driver.tls_ca = ca + "ca.pem";
    }
    return o;
  }

  bool tls;
  std::string certs;
  testing::process_cluster cluster;
  std::size_t far_node = cluster.add_node({"--resources", R"({"far": 100})"});
  /// On the far node: its calls go from the driver straight to a worker
  /// process behind another node than the head's.
  actor_handle<cluster_counter> actor =
      prism::actor(cluster_counter::create).resources({{"far", 1}}).remote();
};

/// The cluster the metrics run on, if one runs.
std::unique_ptr<bench_cluster>& the_cluster() {
  static std::unique_ptr<bench_cluster> c;
  return c;
}

/// The cluster of the metrics, plain or `tls`: a metric of the other kind
/// stops it and starts one of its kind.
bench_cluster& running_cluster(bool tls = false) {
  auto& c = the_cluster();
  if (c && c->tls != tls)
    c.reset();
  if (!c)
    c = std::make_unique<bench_cluster>(tls);
  return *c;
}

// -- metrics ------------------------------------------------------------------

double tasks_sync_on(bool tls, const run_options& opts) {
  running_cluster(tls);
  auto n = opts.iterations(5'000);
  return ops_per_second(n, [n] {
    for (std::size_t i = 0; i < n; ++i)
      expect(get(task(cluster_small_value).remote(), result_timeout) == 0,
             "cluster_small_value returned a value other than 0");
  });
}

double tasks_async_on(bool tls, const run_options& opts) {
  running_cluster(tls);
  auto n = opts.iterations(100'000);
  return ops_per_second(n, [n] {
    std::vector<object_ref<int>> refs;
    refs.reserve(n);
    for (std::size_t i = 0; i < n; ++i)
      refs.push_back(task(cluster_small_value).remote());
    auto xs = get(refs, result_timeout);
    expect(std::all_of(xs.begin(), xs.end(), [](int x) { return x == 0; }),
           "cluster_small_value returned a value other than 0");
  });
}

double tasks_sync(const run_options& opts) {
  return tasks_sync_on(false, opts);
}

double tasks_async(const run_options& opts) {
  return tasks_async_on(false, opts);
}

/// The same work as `tasks_sync` and `tasks_async`, with every connection
/// of the cluster mutual TLS.
/// GETs `path` of the plain HTTP port at `url` ("http://127.0.0.1:PORT")
/// and reads the answer to its end; false if it could not.
bool http_get(const std::string& url, const std::string& path) {
  auto port = std::stoi(url.substr(url.rfind(':') + 1));
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in at{};
  at.sin_family = AF_INET;
  at.sin_port = htons(static_cast<std::uint16_t>(port));
  at.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bool ok = ::connect(fd, reinterpret_cast<sockaddr*>(&at), sizeof(at)) == 0;
  auto request =
      "GET " + path + " HTTP/1.1\r\nHost: x\r\nConnection: " + "close\r\n\r\n";
  ok = ok && ::send(fd, request.data(), request.size(), MSG_NOSIGNAL) > 0;
  char buf[16384];
  std::string head;
  for (ssize_t n = 0; ok && (n = ::recv(fd, buf, sizeof(buf), 0)) > 0;)
    if (head.size() < 16)
      head.append(buf, static_cast<std::size_t>(n));
  ::close(fd);
  return ok && head.rfind("HTTP/1.1 200", 0) == 0;
}

/// How much slower `cluster_tasks_async` runs while a status page is
/// polled 10 times a second (its overview, the heaviest of its routes,
/// and a page of actors), in percent: the median of 5 turns with and
/// without, in alternating order.
double status_page_cost_pct(const run_options& opts) {
  auto url = running_cluster().cluster.status_page_url();
  expect(!url.empty(), "the bench cluster's head opened no status page");
  std::atomic<std::uint64_t> polls{0};
  std::atomic<std::uint64_t> failed{0};
  auto pct = cost_pct([&](bool polled) {
    std::atomic<bool> done{false};
    std::thread poller;
    if (polled)
      poller = std::thread{[&] {
        // Paced: the poller stands for a page read 10 times a second.
        auto next = clock::now();
        for (std::uint64_t i = 0; !done; ++i) {
          if (!http_get(url, i % 2 == 0 ? "/api/overview" : "/api/actors"))
            ++failed;
          ++polls;
          next += 100ms;
          std::this_thread::sleep_until(next);
        }
      }};
    auto rate = tasks_async_on(false, opts);
    done = true;
    if (poller.joinable())
      poller.join();
    return rate;
  });
  expect(failed == 0, "a poll of the status page failed");
  expect(polls > 0, "the status page was never polled");
  return pct;
}

double tasks_sync_tls(const run_options& opts) {
  return tasks_sync_on(true, opts);
}

double tasks_async_tls(const run_options& opts) {
  return tasks_async_on(true, opts);
}

double actor_calls_sync(const run_options& opts) {
  auto& a = running_cluster().actor;
  auto n = opts.iterations(5'000);
  return ops_per_second(n, [&a, n] {
    for (std::size_t i = 0; i < n; ++i)
      get(a.task(&cluster_counter::add).remote(1), result_timeout);
  });
}

double actor_calls_async(const run_options& opts) {
  auto& a = running_cluster().actor;
  auto n = opts.iterations(100'000);
  return ops_per_second(n, [&a, n] {
    std::vector<object_ref<int>> refs;
    refs.reserve(n);
    for (std::size_t i = 0; i < n; ++i)
      refs.push_back(a.task(&cluster_counter::add).remote(1));
    auto xs = get(refs, result_timeout);
    expect(xs.back() - xs.front() == static_cast<int>(n) - 1,
           "the actor's calls did not run once each, in order");
  });
}

/// MB/s of the driver's `get` of `ref`, a value of `mb` MB made by a task
/// and kept in a node's store (the task is waited for first).
double get_rate(const object_ref<std::string>& ref, int mb) {
  wait(std::vector<object_ref<std::string>>{ref}, 1, result_timeout);
  auto start = clock::now();
  auto value = get(ref, result_timeout);
  std::chrono::duration<double> took = clock::now() - start;
  expect(value.size() == static_cast<std::size_t>(mb) << 20,
         "the value read is not the size written");
  return mb / took.count();
}

double get_100mb_across_nodes(const run_options& opts) {
  running_cluster();
  int mb = opts.smoke ? 10 : 100;
  // Made on the far node and kept in its object store; then read here.
  return get_rate(task(cluster_big_value).resources({{"far", 1}}).remote(mb),
                  mb);
}

/// A 100 MB value made on the driver's own node and kept in its store, read
/// by the driver: in place, from the store's shared memory, into a string
/// of its own (fresh memory: `page_fault_floor_100mb` is what that costs).
double get_100mb_same_node(const run_options& opts) {
  running_cluster();
  int mb = opts.smoke ? 10 : 100;
  auto here = prism::get_runtime_context().node;
  return get_rate(task(cluster_big_value).node_affinity(here).remote(mb), mb);
}

/// Actors per second, created by a job of their own with `iso` and called
/// once each (Ray's `many_actors` counts actors created and ready); the job
/// ends after, and its actors with it.
double create_actors(std::size_t n, prism::isolation iso) {
  running_cluster();
  auto job = client::connect("bench-actors");
  std::vector<actor_handle<cluster_counter>> actors;
  actors.reserve(n);
  auto rate = ops_per_second(n, [&] {
    for (std::size_t i = 0; i < n; ++i)
      actors.push_back(
          job.actor(cluster_counter::create).isolation(iso).remote());
    std::vector<object_ref<int>> refs;
    refs.reserve(n);
    for (auto& a : actors)
      refs.push_back(job.task(a, &cluster_counter::add).remote(1));
    for (auto& ref : refs)
      expect(job.get(ref, result_timeout) == 1,
             "an actor's first call did not return 1");
  });
  end_job(job);
  return rate;
}

/// Actors in a process of their own each, forked from the job's program.
double actor_creation_processes(const run_options& opts) {
  return create_actors(opts.smoke ? 10 : 200, prism::isolation::process);
}

/// Actors in the processes a node shares among its job's actors.
double actor_creation_shared(const run_options& opts) {
  return create_actors(opts.iterations(20'000), prism::isolation::shared);
}

/// `root` and every process below it.
std::vector<int> process_tree(int root) {
  std::multimap<int, int> children;
  for (const auto& entry : std::filesystem::directory_iterator{"/proc"}) {
    auto name = entry.path().filename().string();
    if (!std::all_of(name.begin(), name.end(), ::isdigit))
      continue;
    std::ifstream stat{entry.path() / "stat"};
    std::string text;
    std::getline(stat, text);
    auto close = text.rfind(')');
    if (close == std::string::npos)
      continue;
    std::istringstream rest{text.substr(close + 2)};
    std::string state;
    int ppid = 0;
    rest >> state >> ppid;
    children.emplace(ppid, std::stoi(name));
  }
  std::vector<int> tree{root};
  for (std::size_t i = 0; i < tree.size(); ++i) {
    auto [from, to] = children.equal_range(tree[i]);
    for (auto c = from; c != to; ++c)
      tree.push_back(c->second);
  }
  return tree;
}

/// The status page's answers on the 100k-actor cluster of
/// `shared_actors_100k_rss_mb`, measured there; negative until it ran, and
/// once taken (`page_figure`).
struct page_on_100k {
  double search_ms = -1;
  double overview_ms = -1;
};

page_on_100k& page_figures() {
  static page_on_100k figures;
  return figures;
}

/// The median time of 5 GETs of the status page at `url`, each a question
/// it has not answered in the last second (so never from its cache).
double median_get_ms(const std::string& url,
                     const std::vector<std::string>& paths) {
  std::vector<double> ms;
  for (const auto& path : paths) {
    auto t0 = clock::now();
    expect(http_get(url, path), "the status page did not answer");
    ms.push_back(
        std::chrono::duration<double, std::milli>(clock::now() - t0).count());
    // Time is the subject: the page gives an answer again for 1 s, and
    // each GET here must be answered anew.
    std::this_thread::sleep_for(1100ms);
  }
  return median(ms);
}

/// Resident memory of a one-node cluster of 2 CPUs (its one process, the
/// head, and every process below it: fork server, spares, the actors'
/// processes) with 100,000 shared actors alive, each called once, plus
/// what the driver (this process) grew by while it made them.
double shared_actors_100k_rss_mb(const run_options& opts) {
  // A cluster of one node of its own; the metrics after start theirs.
  the_cluster().reset();
  auto o = bench_cluster::options("");
  o.nodes = 0;
  testing::process_cluster cluster{o};
  auto n = opts.iterations(100'000);
  return_freed_heap();
  auto driver_before = resident_mb_of(static_cast<int>(::getpid()));
  std::vector<actor_handle<cluster_counter>> actors;
  actors.reserve(n);
  for (std::size_t i = 0; i < n; ++i)
    actors.push_back(prism::actor(cluster_counter::create)
                         .isolation(prism::isolation::shared)
                         .remote());
  std::vector<object_ref<int>> refs;
  refs.reserve(n);
  for (auto& a : actors)
    refs.push_back(a.task(&cluster_counter::add).remote(1));
  for (auto& ref : refs)
    expect(get(ref, result_timeout) == 1,
           "an actor's first call did not return 1");
  refs.clear();
  double mb = 0;
  for (auto pid : process_tree(cluster.node_pid(0)))
    mb += resident_mb_of(pid);
  return_freed_heap();
  mb += std::max(0.0,
                 resident_mb_of(static_cast<int>(::getpid())) - driver_before);
  // The status page on this cluster: a search of the actor table by a part
  // of the class name, in a new case each time, and the overview.
  auto url = cluster.status_page_url();
  page_figures().search_ms =
      median_get_ms(url, {"/api/actors?q=counter", "/api/actors?q=Counter",
                          "/api/actors?q=COUNTER", "/api/actors?q=cOunter",
                          "/api/actors?q=coUnter"});
  page_figures().overview_ms =
      median_get_ms(url, {"/api/overview", "/api/overview", "/api/overview",
                          "/api/overview", "/api/overview"});
  return mb;
}

/// A figure of the status page on the 100k-actor cluster: the one its
/// last run measured, taken once. Asked for again (a metric measured
/// again), it comes from a new run of that cluster, not the same figure
/// twice.
double page_figure(const run_options& opts, double page_on_100k::*figure) {
  if (page_figures().*figure < 0)
    shared_actors_100k_rss_mb(opts);
  return std::exchange(page_figures().*figure, -1.0);
}

/// The median time, over the node logs, from a worker process's start to
/// its registration with its node, for the workers of the jobs this metric
/// starts that were forked from their program's fork server (a spare of
/// it, or forked on request). Each job starts on a settled node: the
/// previous job's workers gone and its server's spares prepared. The first
/// workers of the program, which start by exec while its fork server
/// starts, are not counted.
double worker_process_start_ms(const run_options&) {
  static std::set<std::uint64_t> jobs;
  static const std::regex line{
      R"(of job (\d+) registered (\d+(\.\d+)?) ms after its start \(forked)"};
  auto& c = running_cluster();
  auto samples = [&] {
    std::vector<double> found;
    for (auto name :
         {std::string{"head"},
          "node-" + std::to_string(c.cluster.node_pid(c.far_node))}) {
      auto log = c.cluster.log_of(name);
      for (std::sregex_iterator i{log.begin(), log.end(), line}, end; i != end;
           ++i)
        if (jobs.count(std::stoull((*i)[1].str())) > 0)
          found.push_back(std::stod((*i)[2].str()));
    }
    return found;
  };
  // A job, then another, until one of this metric's workers was forked
  // (the first job of the program starts its fork server).
  for (int tries = 0; tries < 2 || samples().empty(); ++tries) {
    expect(tries < 10, "no node logged a forked worker process's registration");
    // What the node does after a job (its workers stop, its server forks
    // and prepares spares) takes tens of milliseconds of CPU: a job that
    // came at once would measure them, not a start.
    std::this_thread::sleep_for(settle_time);
    // A new job needs worker processes of its own.
    auto job = client::connect("bench-start");
    jobs.insert(job.job().value);
    std::vector<object_ref<int>> refs;
    for (int i = 0; i < 4; ++i)
      refs.push_back(job.task(cluster_small_value).remote());
    job.get(refs.back(), result_timeout);
    job.shutdown();
  }
  auto all = samples();
  std::sort(all.begin(), all.end());
  return all[all.size() / 2];
}

/// A note of `cluster_note_attempt`: when it started, and its node's pid.
struct attempt_note {
  std::int64_t started_ms = 0;
  int node_pid = 0;
};

attempt_note wait_for_note(const std::string& key) {
  auto deadline = clock::now() + result_timeout;
  while (clock::now() < deadline) {
    if (auto v = kv::get(key, "bench")) {
      attempt_note note;
      note.started_ms = std::stoll(v->substr(0, v->find(' ')));
      note.node_pid = std::stoi(v->substr(v->find(' ') + 1));
      return note;
    }
    // Polls the table until the deadline: the note is the condition.
    std::this_thread::sleep_for(1ms);
  }
  throw std::runtime_error("no attempt noted as " + key);
}

/// SIGKILL of a node under a running task to the task's retry starting on
/// another node.
double node_kill_to_retry_ms(const run_options&) {
  static int run = 0;
  ++run;
  auto& c = running_cluster();
  // Two fresh nodes that may run it; the first attempt runs on one of them.
  std::vector<std::size_t> spots;
  for (int i = 0; i < 2; ++i)
    spots.push_back(c.cluster.add_node({"--resources", R"({"spot": 1})"}));
  auto key = [](int attempt) {
    return "run-" + std::to_string(run) + "-attempt-" + std::to_string(attempt);
  };
  auto ref = task(cluster_note_attempt)
                 .resources({{"spot", 1}})
                 .max_retries(1)
                 .remote(run);
  auto first = wait_for_note(key(0));
  auto victim = std::find_if(spots.begin(), spots.end(), [&](std::size_t i) {
    return c.cluster.node_pid(i) == first.node_pid;
  });
  expect(victim != spots.end(), "the task ran on no node it could run on");
  auto killed_at = now_ms();
  c.cluster.kill_node(*victim);
  auto retried = wait_for_note(key(1));
  expect(get(ref, result_timeout) == 1, "the retry did not run");
  expect(retried.node_pid != first.node_pid, "the retry ran on the dead node");
  for (auto i : spots)
    if (i != *victim)
      c.cluster.kill_node(i);
  return static_cast<double>(retried.started_ms - killed_at);
}

/// Milliseconds since midnight of the times in the head's log lines that
/// declare a node dead ("[HH:MM:SS.mmm] ... node N is dead").
std::vector<std::int64_t> deaths_in(const std::string& log) {
  static const std::regex line{
      R"(\[(\d\d):(\d\d):(\d\d)\.(\d\d\d)\][^\n]*node [0-9a-f]+ is dead)"};
  std::vector<std::int64_t> result;
  for (std::sregex_iterator i{log.begin(), log.end(), line}, end; i != end; ++i)
    result.push_back(
        ((std::stoll((*i)[1].str()) * 60 + std::stoll((*i)[2].str())) * 60 +
         std::stoll((*i)[3].str())) *
            1000 +
        std::stoll((*i)[4].str()));
  return result;
}

/// SIGSTOP of a node to the control store declaring it dead (the time its
/// log line gives), with the default heartbeat settings.
double node_freeze_detect_ms(const run_options&) {
  auto& c = running_cluster();
  auto i = c.cluster.add_node();
  auto before = deaths_in(c.cluster.log_of("head")).size();
  auto frozen_at = now_ms();
  c.cluster.freeze_node(i);
  auto start = clock::now();
  std::vector<std::int64_t> deaths;
  while ((deaths = deaths_in(c.cluster.log_of("head"))).size() <= before) {
    expect(clock::now() - start < 60s, "a frozen node was never declared dead");
    // Polls the log until the deadline; the time measured is the log's.
    std::this_thread::sleep_for(20ms);
  }
  c.cluster.kill_node(i);
  // The log's clock is the local time of day, to the millisecond.
  constexpr std::int64_t day_ms = 24 * 3600 * 1000;
  std::time_t seconds = frozen_at / 1000;
  std::tm local{};
  ::localtime_r(&seconds, &local);
  auto frozen_of_day =
      ((local.tm_hour * 60 + local.tm_min) * 60 + local.tm_sec) * 1000LL +
      frozen_at % 1000;
  return static_cast<double>((deaths.back() - frozen_of_day + day_ms) % day_ms);
}

} // namespace

void stop_bench_cluster() {
  the_cluster().reset();
}

std::vector<metric> cluster_metrics() {
  return {
      {"cluster_tasks_sync", "per_s", false, tasks_sync},
      {"cluster_tasks_async", "per_s", false, tasks_async},
      {"status_page_cost_pct", "pct", false, status_page_cost_pct},
      {"cluster_actor_calls_sync", "per_s", false, actor_calls_sync},
      {"cluster_actor_calls_async", "per_s", false, actor_calls_async},
      {"cluster_actor_creation", "per_s", false, actor_creation_processes},
      {"cluster_actor_creation_shared", "per_s", false, actor_creation_shared},
      {"cluster_100k_actors_rss_mb", "MB", false, shared_actors_100k_rss_mb},
      {"status_page_100k_actors_search_ms", "ms", false,
       [](const run_options& opts) {
         return page_figure(opts, &page_on_100k::search_ms);
       }},
      {"status_page_100k_actors_overview_ms", "ms", false,
       [](const run_options& opts) {
         return page_figure(opts, &page_on_100k::overview_ms);
       }},
      {"cluster_get_100mb_across_nodes", "MB_per_s", false,
       get_100mb_across_nodes},
      {"node_get_100mb_same_node", "MB_per_s", false, get_100mb_same_node},
      {"worker_process_start_ms", "ms", false, worker_process_start_ms},
      {"cluster_node_freeze_detect_ms", "ms", false, node_freeze_detect_ms},
      {"cluster_node_kill_to_retry_ms", "ms", false, node_kill_to_retry_ms},
      {"cluster_tasks_sync_tls", "per_s", false, tasks_sync_tls},
      {"cluster_tasks_async_tls", "per_s", false, tasks_async_tls},
  };
}

} // namespace prism::bench
