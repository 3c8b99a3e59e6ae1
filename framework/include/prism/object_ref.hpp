#pragma once

#include <caf/meta/load_callback.hpp>
#include <caf/meta/save_callback.hpp>
#include <caf/none.hpp>

#include "prism/detail/runtime.hpp"
#include "prism/ids.hpp"

namespace prism {

/// A reference to an object that holds a `T`, now or once the task that
/// makes it finishes. Copies refer to the same object; the object lives while
/// any reference to it does. Refs may be passed to tasks (top-level refs
/// arrive as values), nested in containers and user types, and returned.
template <class T>
class object_ref {
public:
  using value_type = T;

  /// An empty reference. REQUIRES: assigned before use.
  object_ref() = default;

  explicit object_ref(detail::ref_ptr token) : token_(std::move(token)) {}

  /// The object's id. REQUIRES: `valid()`.
  const object_id& id() const noexcept {
    return token_->id();
  }

  /// The worker (driver or worker) that owns the object.
  const worker_id& owner() const noexcept {
    return token_->owner();
  }

  /// Whether this ref names an object.
  bool valid() const noexcept {
    return token_ != nullptr;
  }

  const detail::ref_token* token() const noexcept {
    return token_.get();
  }

  friend bool operator==(const object_ref& x, const object_ref& y) noexcept {
    if (!x.valid() || !y.valid())
      return x.valid() == y.valid();
    return x.id() == y.id();
  }

  template <class Inspector>
  friend typename Inspector::result_type inspect(Inspector& f, object_ref& x) {
    object_id id;
    worker_id owner;
    if constexpr (Inspector::reads_state) {
      if (x.valid()) {
        id = x.id();
        owner = x.owner();
      }
    }
    // The bytes keep the id and the owner; the owner's address goes in the
    // value's list of refs, which travels in messages (see `owner_address`).
    return f(id, static_cast<unique_id&>(owner),
             caf::meta::save_callback([&]() -> caf::error {
               if (!id.nil())
                 detail::ref_capture::note(id, owner, x.token_->address());
               return caf::none;
             }),
             caf::meta::load_callback([&]() -> caf::error {
               x.token_ = id.nil() ? nullptr : detail::borrow_ref(id, owner);
               return caf::none;
             }));
  }

private:
  detail::ref_ptr token_;
};

namespace detail {

template <class T>
struct is_object_ref : std::false_type {};

template <class T>
struct is_object_ref<object_ref<T>> : std::true_type {};

} // namespace detail

} // namespace prism
