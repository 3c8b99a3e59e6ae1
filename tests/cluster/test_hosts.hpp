#pragma once

// Hosts as hosts: two network namespaces on a bridge of this machine, each
// with an address of its own, and a `prism` command that runs in each. A
// process in one reaches the other only over the bridge, as another host
// would. Needs root and iproute2 (CI runs as root).

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>

#include <boost/test/unit_test.hpp>

namespace prism::cluster_test {

class test_hosts {
public:
  test_hosts() {
    auto tag = std::to_string(::getpid() % 100000);
    auto subnet = "10.213." + std::to_string(::getpid() % 200 + 20) + ".";
    address_a_ = subnet + "1";
    address_b_ = subnet + "2";
    bridge_ = "pbr" + tag;
    ns_a_ = "prism-" + tag + "-a";
    ns_b_ = "prism-" + tag + "-b";
    char pattern[] = "/tmp/prism-hosts-XXXXXX";
    dir_ = ::mkdtemp(pattern);
    BOOST_REQUIRE_MESSAGE(
        sh("ip link add " + bridge_ + " type bridge && ip link set " + bridge_ +
           " up"),
        "cannot make a bridge: the test of hosts needs root and iproute2");
    add_host(ns_a_, "pva" + tag, address_a_, dir_ + "/prism-a");
    add_host(ns_b_, "pvb" + tag, address_b_, dir_ + "/prism-b");
  }

  ~test_hosts() {
    sh("ip netns del " + ns_a_);
    sh("ip netns del " + ns_b_);
    sh("ip link del " + bridge_);
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }

  test_hosts(const test_hosts&) = delete;
  test_hosts& operator=(const test_hosts&) = delete;

  const std::string& address_a() const {
    return address_a_;
  }
  const std::string& address_b() const {
    return address_b_;
  }

  /// The `prism` command of host a (b): the one built with the tests,
  /// run in that host's namespace.
  std::string prism_a() const {
    return dir_ + "/prism-a";
  }
  std::string prism_b() const {
    return dir_ + "/prism-b";
  }

private:
  static bool sh(const std::string& command) {
    return std::system((command + " >/dev/null 2>&1").c_str()) == 0;
  }

  void add_host(const std::string& ns, const std::string& veth,
                const std::string& address, const std::string& command) {
    auto inner = veth + "i";
    BOOST_REQUIRE_MESSAGE(
        sh("ip netns add " + ns + " && ip link add " + veth +
           " type veth peer name " + inner + " && ip link set " + inner +
           " netns " + ns + " && ip link set " + veth + " master " + bridge_ +
           " && ip link set " + veth + " up && ip -n " + ns + " addr add " +
           address + "/24 dev " + inner + " && ip -n " + ns + " link set " +
           inner + " up && ip -n " + ns + " link set lo up"),
        "cannot make host " << ns << " at " << address);
    std::ofstream{command} << "#!/bin/sh\nexec ip netns exec " << ns << " "
                           << PRISM_TOOL_PATH << " \"$@\"\n";
    std::filesystem::permissions(command, std::filesystem::perms::owner_all);
  }

  std::string address_a_;
  std::string address_b_;
  std::string bridge_;
  std::string ns_a_;
  std::string ns_b_;
  std::string dir_;
};

} // namespace prism::cluster_test
