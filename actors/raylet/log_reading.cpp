// `prism logs` reading a node's files through its raylet (protocol/output.hpp):
// the output files of its worker processes, or of another node's that share
// its session directory (a dead one's too), and its process's own log.

#include "raylet/log_files.hpp"
#include "raylet/raylet_state.hpp"

namespace prism::actors::raylet_internal {

namespace {

/// The pid of the process running `actor` on this node: its instance
/// process if it has one, else the worker process hosting it; 0 if none.
pid_t pid_of_actor(raylet_actor* self, const actor_id& actor) {
  auto& st = self->state;
  for (auto& [addr, h] : st.hosts) {
    if (h.actor != actor)
      continue;
    for (auto& [token, p] : st.instance_processes)
      if (same_actor(p.requester, h.host) && p.pid > 0)
        return p.pid;
    if (auto* w = st.pool.find(h.worker))
      return w->pid;
  }
  return 0;
}

/// Reads each of `names` in `dir` as `msg` asks, up to the answer's size.
void read_pieces(const std::string& dir, const std::vector<std::string>& names,
                 const protocol::read_logs& msg, protocol::log_pieces& out) {
  std::uint64_t left = max_log_answer_bytes;
  for (auto& name : names) {
    std::optional<std::uint64_t> offset;
    if (auto i = msg.offsets.find(name); i != msg.offsets.end())
      offset = i->second;
    auto piece = read_log_piece(dir, name, offset, msg.tail, left);
    if (!piece)
      continue;
    left -= piece->bytes.size();
    out.pieces.push_back(std::move(*piece));
  }
}

} // namespace

protocol::log_pieces read_logs(raylet_actor* self,
                               const protocol::read_logs& msg) {
  auto& st = self->state;
  protocol::log_pieces out;
  auto here = st.cfg.node.hex().substr(0, 8);
  if (msg.component == "node") {
    auto log = own_log_file();
    if (log.empty()) {
      out.error = "node " + here +
                  " logs to no file (its stderr is a "
                  "terminal or a pipe)";
      return out;
    }
    read_pieces("", {log}, msg, out);
    return out;
  }
  if (msg.component != "worker") {
    out.error = "no component '" + msg.component + "': worker or node";
    return out;
  }
  if (!st.cfg.output || st.cfg.output->config().dir.empty()) {
    out.error = "node " + here +
                " keeps no files of worker processes (its "
                "workers are threads, or it has no session directory)";
    return out;
  }
  auto& dir = st.cfg.output->config().dir;
  out.directory = dir;
  pid_t pid = msg.pid;
  if (msg.actor != actor_id{}) {
    pid = pid_of_actor(self, msg.actor);
    if (pid == 0) {
      out.error = "actor " + msg.actor.hex() +
                  " runs in no worker process "
                  "of node " +
                  here;
      return out;
    }
  }
  auto of = msg.of == node_id{} ? st.cfg.node : msg.of;
  std::vector<std::string> names;
  for (auto& name : indexed_files(dir, worker_output::index_name(of)))
    if (name.rfind("worker-", 0) == 0 &&
        log_file_matches(name, msg.job, pid, msg.err))
      names.push_back(name);
  read_pieces(dir, names, msg, out);
  return out;
}

} // namespace prism::actors::raylet_internal
