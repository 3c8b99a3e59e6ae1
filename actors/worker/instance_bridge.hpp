#pragma once

// What the host of an instance process (worker/instance_process.hpp) does
// for the calls of Prism's API that the instance makes: its own runtime for
// the instance makes each, and it keeps the references the process holds.
//
// Values cross the process's socket without an actor system, so the refs in
// them lose the handle of their owner and keep its id, node and contact. The
// bridge notes the address of every ref it hands to the process, and gives a
// ref the process names back the address it had.

#include <cstddef>
#include <functional>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "common/executor.hpp"
#include "prism/detail/runtime.hpp"
#include "prism/internal/thread_annotations.hpp"
#include "worker/instance_process.hpp"

namespace prism::actors {

class instance_bridge : public std::enable_shared_from_this<instance_bridge> {
public:
  /// Calls its second argument once the object of the first is ready.
  using when_ready_fn =
      std::function<void(const detail::ref_token&, std::function<void()>)>;

  /// `rt` makes the instance's calls, on the threads of `pool`; `wake`
  /// wakes the waits of calls that were cancelled (`get` throws then);
  /// `when_ready` serves `op::when_ready`.
  instance_bridge(std::shared_ptr<detail::runtime> rt,
                  std::shared_ptr<executor> pool, std::function<void()> wake,
                  when_ready_fn when_ready);

  /// The process made `call` (on the link's reading thread): made here if
  /// it only touches references, which never waits, else on the pool; its
  /// answer goes back on `link`.
  void take(instance_link& link, instance_wire::runtime_call call);

  /// The refs inside `values` go to the process: their addresses are noted.
  void sending(const std::vector<detail::value>& values);

  /// A value came from the process: its refs get the addresses they had.
  void restore(detail::value& v);

  /// The process held `refs` to send them in a value (`hold`), and the
  /// host lets go of them once it sent the value on: they are not the
  /// process's any more.
  void handed_on(const std::vector<detail::contained_ref>& refs);

  /// The calls that `task` makes stop waiting (it was cancelled).
  void cancel(const task_id& task);

private:
  /// What the bridge knows of one object the process has a ref to.
  struct known_ref {
    detail::owner_address address;
    /// The process's references that a ref made here stands for.
    std::vector<detail::ref_ptr> refs;
    /// Its references taken by `hold`, which `release` drops.
    std::size_t holds = 0;
  };

  /// The pending calls of one task, whose flags its cancellation sets.
  struct running_call {
    task_id task;
    std::atomic<bool> cancelled{false};
  };

  void note(const detail::contained_ref& r) EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void restore(detail::contained_ref& r) EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void restore_call(instance_wire::runtime_call& call);
  /// Makes `call` with the runtime; fills `a`. May wait.
  void make(instance_wire::runtime_call& call,
            instance_wire::runtime_answer& a);
  /// The refs `call` touches only: holds, releases, borrows.
  void make_ref_call(instance_wire::runtime_call& call,
                     instance_wire::runtime_answer& a);
  /// A token of the object `r` names: the bridge's own if it keeps one,
  /// else one made for a call (which releases nothing when it goes).
  detail::ref_ptr token_of(const detail::contained_ref& r);
  /// A ref made for the process: kept until the process lets go of it.
  detail::contained_ref keep(detail::ref_ptr ref);
  /// Has the process read the bytes of `a.value` in place if they lie in
  /// the node's store and are large enough to be worth it.
  void hand_in_place(instance_wire::runtime_answer& a);
  /// Forgets addresses of objects the process holds nothing of, once too
  /// many are known. REQUIRES: mu_ held.
  void trim() EXCLUSIVE_LOCKS_REQUIRED(mu_);

  std::shared_ptr<detail::runtime> rt_;
  std::shared_ptr<executor> pool_;
  std::function<void()> wake_;
  when_ready_fn when_ready_;
  std::mutex mu_;
  std::unordered_map<object_id, known_ref> known_ GUARDED_BY(mu_);
  /// Values whose bytes the process reads in place, kept (and with them
  /// their pins in the node's store) until it releases them.
  std::unordered_map<std::uint64_t, detail::value> kept_ GUARDED_BY(mu_);
  std::uint64_t next_kept_ GUARDED_BY(mu_) = 0;
  std::vector<running_call*> running_ GUARDED_BY(mu_);
};

} // namespace prism::actors
