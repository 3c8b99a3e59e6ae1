#include "net/peers.hpp"

#include <algorithm>
#include <chrono>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include <caf/all.hpp>
#include <caf/io/basp_broker.hpp>
#include <caf/io/middleman.hpp>

#include "common/default_handlers.hpp"
#include "net/network.hpp"
#include "prism/error.hpp"

namespace prism::actors {

namespace {

// Sends `msg` as it is, from nobody (`anon_send` would wrap it in another
// message).
void send_message(const caf::actor& dest, caf::message msg) {
  dest->enqueue(nullptr, caf::make_message_id(), std::move(msg), nullptr);
}

const auto dialer_name = caf::atom("PrismDial");

/// What this process knows of its peers, per actor system.
struct peer_table {
  /// Where it takes connections.
  std::string contact;
  /// The middleman's BASP broker, whose routing table knows the processes
  /// connected to this one (it locks the table itself).
  caf::actor broker;
  /// Per process, the messages handed to the dialer and not sent yet:
  /// later ones queue behind them.
  std::unordered_map<caf::node_id, std::size_t> in_dialer;
};

std::mutex tables_mu;
std::unordered_map<const caf::actor_system*, peer_table> tables;

// Whether the middleman has a connection to `process` (under `tables_mu`,
// which keeps the broker alive).
bool connected_to_locked(const peer_table& table, const caf::node_id& process) {
  if (!table.broker)
    return false;
  auto* basp = static_cast<caf::io::basp_broker*>(
      caf::actor_cast<caf::abstract_actor*>(table.broker));
  return static_cast<bool>(basp->instance.tbl().lookup_direct(process));
}

// Counts a message to `process` handed to the dialer, unless none waits there
// and `process` is connected: then it may go straight and this returns false.
bool hand_to_dialer(caf::actor_system& sys, const caf::node_id& process) {
  std::lock_guard<std::mutex> guard{tables_mu};
  auto i = tables.find(&sys);
  if (i == tables.end())
    return false;
  auto& n = i->second.in_dialer[process];
  if (n == 0 && connected_to_locked(i->second, process)) {
    i->second.in_dialer.erase(process);
    return false;
  }
  ++n;
  return true;
}

// The dialer sent `count` messages it buffered for `process`.
void sent_from_dialer(caf::actor_system& sys, const caf::node_id& process,
                      std::size_t count) {
  std::lock_guard<std::mutex> guard{tables_mu};
  auto i = tables.find(&sys);
  if (i == tables.end())
    return;
  auto j = i->second.in_dialer.find(process);
  if (j == i->second.in_dialer.end())
    return;
  j->second -= std::min(j->second, count);
  if (j->second == 0)
    i->second.in_dialer.erase(j);
}

/// A message to send once its destination's process is connected.
struct buffered_message {
  caf::actor dest;
  caf::message msg;
};

struct dialer_state {
  /// Who waits for a connection to each process being dialed.
  std::unordered_map<caf::node_id, std::vector<caf::response_promise>> waiting;
  /// The processes being dialed.
  std::unordered_set<caf::node_id> dialing;
  /// What waits to be sent there, in order.
  std::unordered_map<caf::node_id, std::vector<buffered_message>> buffered;
  static inline const char* name = "prism.dialer";
};

using dialer_actor = caf::stateful_actor<dialer_state>;

void answer(dialer_actor* self, const caf::node_id& process,
            const caf::error& err) {
  self->state.dialing.erase(process);
  // Held messages go first (connected or not: through the cluster then),
  // so that nothing sent straight once the process counts as connected
  // overtakes them.
  if (auto h = self->state.buffered.find(process);
      h != self->state.buffered.end()) {
    auto buffered = std::move(h->second);
    self->state.buffered.erase(h);
    for (auto& m : buffered)
      send_message(m.dest, std::move(m.msg));
    sent_from_dialer(self->system(), process, buffered.size());
  }
  auto i = self->state.waiting.find(process);
  if (i == self->state.waiting.end())
    return;
  auto promises = std::move(i->second);
  self->state.waiting.erase(i);
  for (auto& rp : promises) {
    if (err)
      rp.deliver(err);
    else
      rp.deliver(true);
  }
}

// Asks the middleman to connect to `where`, the contact of `process`, again
// while it closes the connection before the handshake
// (`closed_before_handshake`) and `deadline` has not passed; `answer` ends
// the dial.
void dial_until(dialer_actor* self,
                std::chrono::steady_clock::time_point deadline,
                const caf::node_id& process, const std::string& contact,
                const host_port& where) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
      deadline - std::chrono::steady_clock::now());
  self->request(connection_manager(self->system()),
                std::max(left, std::chrono::milliseconds{1}),
                caf::connect_atom::value, where.host, where.port)
      .then(
          [self, process, contact](const caf::node_id& found,
                                   caf::strong_actor_ptr&,
                                   const std::set<std::string>&) {
            if (found == process)
              answer(self, process, caf::none);
            else
              answer(self, process,
                     caf::make_error(caf::sec::invalid_argument,
                                     contact +
                                         " is another process now: the one "
                                         "named there is gone"));
          },
          [self, deadline, process, contact, where](caf::error& err) {
            if (closed_before_handshake(err) &&
                std::chrono::steady_clock::now() < deadline) {
              component_logger("peers")->debug(
                  "the connection to {} closed before its handshake; dialing "
                  "again",
                  contact);
              dial_until(self, deadline, process, contact, where);
              return;
            }
            answer(self, process, err);
          });
}

// Dials `contact` unless a dial of `process` is under way; `answer` ends it.
void dial(dialer_actor* self, std::chrono::milliseconds timeout,
          const caf::node_id& process, const std::string& contact) {
  if (!self->state.dialing.insert(process).second)
    return;
  component_logger("peers")->debug("dialing {}", contact);
  host_port where;
  try {
    where = parse_host_port(contact, "a peer's contact");
  } catch (const std::exception& e) {
    answer(self, process,
           caf::make_error(caf::sec::invalid_argument, std::string{e.what()}));
    return;
  }
  dial_until(self, std::chrono::steady_clock::now() + timeout, process, contact,
             where);
}

// Connects to the processes others name by contact. CAF's middleman keeps
// one connection per pair of processes: dialing a process that connected to
// this one already costs a handshake and keeps the first connection.
caf::behavior dialer(dialer_actor* self, std::chrono::milliseconds timeout) {
  install_default_handlers(self, component_logger("peers"));
  return {
      [self, timeout](dial_atom, const caf::node_id& process,
                      const std::string& contact) -> caf::result<bool> {
        if (connected_to(self->system(), process))
          return true;
        auto rp = self->make_response_promise();
        self->state.waiting[process].push_back(rp);
        dial(self, timeout, process, contact);
        return rp;
      },
      [self, timeout](dial_atom, const caf::node_id& process,
                      const std::string& contact, caf::actor& dest,
                      caf::message& msg) {
        self->state.buffered[process].push_back(
            buffered_message{std::move(dest), std::move(msg)});
        if (connected_to(self->system(), process) &&
            self->state.dialing.count(process) == 0)
          answer(self, process, caf::none); // sends what it buffered, in order
        else
          dial(self, timeout, process, contact);
      },
  };
}

// The middleman's BASP broker of `sys`, or none without a middleman.
caf::actor basp_broker_of(caf::actor_system& sys) {
  if (!sys.has_middleman())
    return {};
  return sys.middleman().named_broker<caf::io::basp_broker>(caf::atom("BASP"));
}

} // namespace

void set_own_contact(caf::actor_system& sys, std::string contact) {
  std::lock_guard<std::mutex> guard{tables_mu};
  tables[&sys].contact = std::move(contact);
}

std::string listen_for_peers(caf::actor_system& sys, const std::string& host,
                             bool insecure, const std::string& advertise) {
  if (check_exposure(host, uses_tls(sys), insecure))
    component_logger("peers")->warn("{}", insecure_warning(host));
  auto port = open_port(sys, 0, host, true);
  if (!port)
    throw invalid_argument_error("cannot listen for the cluster's processes "
                                 "on '" +
                                 host + "': " + sys.render(port.error()));
  auto contact =
      address_of(host_port{advertise.empty() ? host : advertise, *port});
  set_own_contact(sys, contact);
  return contact;
}

std::string own_contact(caf::actor_system& sys) {
  std::lock_guard<std::mutex> guard{tables_mu};
  auto i = tables.find(&sys);
  return i != tables.end() ? i->second.contact : std::string{};
}

void send_to_peer(caf::actor_system& sys, const caf::actor& dest,
                  const std::string& contact, caf::message msg) {
  auto process = dest.node();
  // Straight there once connected, unless earlier messages still wait in
  // the dialer: those go first.
  auto dialer =
      process == sys.node() || contact.empty() ? caf::actor{} : dialer_of(sys);
  if (!dialer || !hand_to_dialer(sys, process)) {
    send_message(dest, std::move(msg));
    return;
  }
  caf::anon_send(dialer, dial_atom::value, process, contact, dest,
                 std::move(msg));
}

void stop_peers(caf::actor_system& sys) {
  if (auto handle = dialer_of(sys)) {
    sys.registry().erase(dialer_name);
    caf::anon_send_exit(handle, caf::exit_reason::user_shutdown);
  }
  std::lock_guard<std::mutex> guard{tables_mu};
  tables.erase(&sys);
}

namespace {

/// Whether the broker's mailbox is empty, read on the multiplexer's thread
/// (its owner's); nullopt if the multiplexer did not answer in time.
std::optional<bool> broker_mailbox_empty(caf::actor_system& sys,
                                         const caf::actor& broker) {
  auto answer = std::make_shared<std::promise<bool>>();
  auto empty = answer->get_future();
  sys.middleman().backend().dispatch([broker, answer] {
    auto* b = static_cast<caf::io::basp_broker*>(
        caf::actor_cast<caf::abstract_actor*>(broker));
    answer->set_value(b->mailbox().empty());
  });
  if (empty.wait_for(std::chrono::seconds{1}) != std::future_status::ready)
    return std::nullopt;
  return empty.get();
}

} // namespace

void release_broker(caf::actor_system& sys) {
  auto broker = basp_broker_of(sys);
  if (!broker)
    return;
  // What this process's actors sent last goes out first. CAF 0.17.6 never
  // empties the mailbox of a broker it stops, so each message left there
  // keeps its sender past the end of the actor system: an actor of its own
  // thread that sent it (a driver's printer of its workers' output) then
  // holds the system's destructor for ever. The actors ended already; the
  // broker takes what they sent within milliseconds.
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds{2};
  for (;;) {
    auto empty = broker_mailbox_empty(sys, broker);
    if (!empty || *empty || std::chrono::steady_clock::now() >= deadline)
      break;
    std::this_thread::sleep_for(std::chrono::milliseconds{5});
  }
  // The broker runs on the multiplexer's thread: its tables are read there.
  auto taken = std::make_shared<std::promise<std::vector<caf::actor>>>();
  auto helpers = taken->get_future();
  sys.middleman().backend().dispatch([broker, taken] {
    auto* b = static_cast<caf::io::basp_broker*>(
        caf::actor_cast<caf::abstract_actor*>(broker));
    std::vector<caf::actor> result;
    for (auto& entry : b->spawn_servers)
      result.push_back(std::move(entry.second));
    b->spawn_servers.clear();
    std::vector<std::uint16_t> ports;
    for (auto& entry : b->instance.published_actors())
      ports.push_back(entry.first);
    for (auto port : ports)
      b->instance.remove_published_actor(port, nullptr);
    taken->set_value(std::move(result));
  });
  if (helpers.wait_for(std::chrono::seconds{5}) != std::future_status::ready)
    return;
  for (auto& helper : helpers.get())
    caf::anon_send_exit(helper, caf::exit_reason::kill);
}

bool connected_to(caf::actor_system& sys, const caf::node_id& process) {
  std::lock_guard<std::mutex> guard{tables_mu};
  auto i = tables.find(&sys);
  return i != tables.end() && connected_to_locked(i->second, process);
}

void start_dialer(caf::actor_system& sys, std::chrono::milliseconds timeout) {
  {
    std::lock_guard<std::mutex> guard{tables_mu};
    tables[&sys].broker =
        sys.middleman().named_broker<caf::io::basp_broker>(caf::atom("BASP"));
  }
  auto handle = sys.spawn<caf::hidden>(dialer, timeout);
  sys.registry().put(dialer_name,
                     caf::actor_cast<caf::strong_actor_ptr>(std::move(handle)));
}

caf::actor dialer_of(caf::actor_system& sys) {
  return caf::actor_cast<caf::actor>(sys.registry().get(dialer_name));
}

} // namespace prism::actors
