// The `prism` command line.
//
//   prism start --head [--port N] [--storage DIR] [--num-cpus N]
//               [--resources JSON] [--block]   the head of a cluster
//   prism start --address HOST:PORT [...]      a node that joins it
//   prism stop                                 stop what `start` started here
//   prism status [--address HOST:PORT]         nodes, jobs, actors, demands
//   prism cert init DIR                        a cluster CA for mutual TLS
//   prism cert issue DIR NAME [--days N]       a certificate it signs
//   prism store check DIR                      is the control store sound?
//   prism store repair DIR [--apply] [--backup B]
//                                              drop log damage and the writes
//                                              after it, after a backup

#include <iostream>
#include <string>

#include <CLI/CLI.hpp>

#include "cert_command.hpp"
#include "cluster_commands.hpp"
#include "store_command.hpp"

int main(int argc, char** argv) {
  CLI::App app{"prism: the Prism runtime's command line"};
  app.require_subcommand(1);
  auto* store = app.add_subcommand(
      "store", "Check or repair a control store's tables on disk");
  store->require_subcommand(1);

  std::string dir;
  auto* check = store->add_subcommand(
      "check", "Tell whether the store opens as it is, and what a repair "
               "would drop; changes nothing. Exit 0: sound, 1: damaged, "
               "2: no store or unreadable");
  check->add_option("DIR", dir, "The store's directory (config.storage_path)")
      ->required();

  bool apply = false;
  std::string backup;
  auto* repair = store->add_subcommand(
      "repair", "Drop damage in a write-ahead log and every write after it. "
                "Without --apply, only prints what it would drop");
  repair->add_option("DIR", dir, "The store's directory (config.storage_path)")
      ->required();
  repair->add_flag("--apply", apply,
                   "Repair: back the store up, then drop what was printed");
  repair->add_option("--backup", backup,
                     "Where the store's files are copied first (a new "
                     "directory; default DIR.before-repair-<time>)");

  prism::tools::start_options so;
  auto* start = app.add_subcommand(
      "start", "Start the head of a cluster (--head) or a node that joins one "
               "(--address); returns once it runs, unless --block");
  start->add_flag("--head", so.head,
                  "Run the control store and a node; others join it");
  start->add_option("--address", so.address,
                    "Join the head at HOST:PORT as a node");
  auto* host_option =
      start
          ->add_option(
              "--host", so.host,
              "The interface to listen on. Beyond loopback it needs "
              "--tls-cert, --tls-key and --tls-ca, or --insecure. Head "
              "default: 127.0.0.1; node default: the interface it "
              "reaches the head from")
          ->capture_default_str();
  start->add_option("--tls-cert", so.tls_cert,
                    "This host's certificate, signed by the cluster CA "
                    "(`prism cert issue`); default: PRISM_TLS_CERT");
  start->add_option("--tls-key", so.tls_key,
                    "The certificate's private key; default: PRISM_TLS_KEY");
  start->add_option("--tls-ca", so.tls_ca,
                    "The cluster CA's certificate; default: PRISM_TLS_CA");
  start->add_option("--token-file", so.token_file,
                    "The cluster token's file (default: PRISM_AUTH_TOKEN, "
                    "then PRISM_AUTH_TOKEN_FILE, then the token of a head "
                    "started on this host). A head with TLS or beyond "
                    "loopback makes one if none is given");
  start->add_flag("--insecure", so.insecure,
                  "Listen beyond loopback without TLS: anyone who reaches "
                  "the port can run code on every node (warns at each start)");
  start->add_option("--node-ip", so.node_ip,
                    "The address others reach this process at, when --host "
                    "is 0.0.0.0 (default: the interface of the default "
                    "route)");
  start->add_option("--port", so.port, "Head: the port (0 picks a free one)")
      ->capture_default_str();
  start->add_option("--storage", so.storage,
                    "Head: the control store's directory (default: a "
                    "temporary one, gone when the head stops)");
  start->add_option("--program-cache", so.program_cache,
                    "Where this node keeps the jobs' programs it fetched from "
                    "the control store (default: prism-<uid>/programs in the "
                    "temporary directory)");
  start
      ->add_option("--num-cpus", so.num_cpus,
                   "CPUs of this node (default: its hardware threads)")
      ->check(CLI::NonNegativeNumber);
  start->add_option("--resources", so.resources,
                    "Custom resources of this node, as JSON: '{\"GPU\": 1}'");
  start->add_option("--autoscaler", so.autoscaler,
                    "Head: grow and shrink the cluster as this JSON file "
                    "says (README, \"Autoscaler\")");
  start->add_flag("--block", so.block,
                  "Stay in the foreground until SIGTERM or SIGINT (for "
                  "systemd or a container)");
  start
      ->add_option("--log-level", so.log_level,
                   "trace, debug, info, warn, error or off")
      ->capture_default_str();
  start
      ->add_option("--heartbeat-interval-ms", so.heartbeat_interval_ms,
                   "How often an idle connection sends a heartbeat")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  start
      ->add_option("--connection-timeout-ms", so.connection_timeout_ms,
                   "A peer silent this long is dead (a frozen process)")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  start
      ->add_option("--head-timeout-ms", so.head_timeout_ms,
                   "Node: how long to dial a lost head before ending")
      ->capture_default_str();

  std::uint32_t grace_ms = 10000;
  auto* stop = app.add_subcommand(
      "stop", "Stop every process `prism start` started on this host");
  stop->add_option("--grace-ms", grace_ms,
                   "How long each may take to stop before it is killed")
      ->capture_default_str();

  std::string status_address;
  auto* status = app.add_subcommand(
      "status", "Print the cluster's nodes, jobs, actors and waiting demands");
  status->add_option("--address", status_address,
                     "The head, HOST:PORT (default: PRISM_ADDRESS, then the "
                     "head started on this host)");

  std::string cert_dir;
  std::string cert_name;
  long cert_days = 825;
  auto* cert = app.add_subcommand(
      "cert", "Make the certificates of a cluster's mutual TLS");
  cert->require_subcommand(1);
  auto* cert_init = cert->add_subcommand(
      "init", "Make a cluster CA in DIR: ca.pem (give it to every process) "
              "and ca.key (keep it here)");
  cert_init->add_option("DIR", cert_dir, "Where the CA's files go")->required();
  auto* cert_issue = cert->add_subcommand(
      "issue", "Issue a certificate NAME.pem and its key NAME.key, signed by "
               "the CA in DIR, for a host or a driver");
  cert_issue->add_option("DIR", cert_dir, "The CA's directory")->required();
  cert_issue
      ->add_option("NAME", cert_name,
                   "The host name or address it names (also its files' name)")
      ->required();
  cert_issue->add_option("--days", cert_days, "How long it is valid")
      ->capture_default_str();

  CLI11_PARSE(app, argc, argv);
  if (cert_init->parsed())
    return prism::tools::cert_init_command(cert_dir, std::cout, std::cerr);
  if (cert_issue->parsed())
    return prism::tools::cert_issue_command(cert_dir, cert_name, cert_days,
                                            std::cout, std::cerr);
  if (start->parsed()) {
    so.host_given = host_option->count() > 0;
    return prism::tools::start_command(so);
  }
  if (stop->parsed())
    return prism::tools::stop_command(grace_ms, std::cout);
  if (status->parsed())
    return prism::tools::status_command(status_address, std::cout);
  if (check->parsed())
    return prism::tools::store_check_command(dir, std::cout);
  return prism::tools::store_repair_command(dir, apply, backup, std::cout);
}
