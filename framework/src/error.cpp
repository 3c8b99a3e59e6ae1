#include "prism/error.hpp"

#include "prism/detail/runtime.hpp"

namespace prism {

const char* to_string(errc code) noexcept {
  switch (code) {
  case errc::ok:
    return "ok";
  case errc::task_failed:
    return "task_failed";
  case errc::worker_crashed:
    return "worker_crashed";
  case errc::timeout:
    return "timeout";
  case errc::function_not_found:
    return "function_not_found";
  case errc::invalid_argument:
    return "invalid_argument";
  case errc::type_mismatch:
    return "type_mismatch";
  case errc::registration_failed:
    return "registration_failed";
  case errc::not_initialized:
    return "not_initialized";
  case errc::internal:
    return "internal";
  case errc::actor_died:
    return "actor_died";
  case errc::gcs_unavailable:
    return "gcs_unavailable";
  case errc::owner_died:
    return "owner_died";
  case errc::unschedulable:
    return "unschedulable";
  case errc::object_lost:
    return "object_lost";
  case errc::reconstruction_failed:
    return "reconstruction_failed";
  case errc::storage_corrupt:
    return "storage_corrupt";
  case errc::permission_denied:
    return "permission_denied";
  case errc::task_cancelled:
    return "task_cancelled";
  case errc::object_store_full:
    return "object_store_full";
  case errc::out_of_memory:
    return "out_of_memory";
  }
  return "unknown";
}

bool is_retryable(errc code) noexcept {
  switch (code) {
  case errc::worker_crashed:
  case errc::timeout:
  case errc::gcs_unavailable:
  case errc::object_store_full:
  case errc::out_of_memory:
    return true;
  default:
    return false;
  }
}

error::error(errc code, const std::string& message)
    : std::runtime_error(message), code_(code) {}

task_error::task_error(std::string exception_type,
                       std::string exception_message, std::string function_name)
    : error(errc::task_failed, "task '" + function_name + "' threw " +
                                   exception_type + ": " + exception_message),
      exception_type_(std::move(exception_type)),
      exception_message_(std::move(exception_message)),
      function_name_(std::move(function_name)) {}

namespace detail {

void throw_error(const error_info& info) {
  switch (info.code) {
  case errc::task_failed:
    throw task_error(info.exception_type, info.message, info.function_name);
  case errc::worker_crashed:
    throw worker_crashed_error(info.message);
  case errc::timeout:
    throw timeout_error(info.message);
  case errc::function_not_found:
    throw function_not_found_error(info.message);
  case errc::invalid_argument:
    throw invalid_argument_error(info.message);
  case errc::type_mismatch:
    throw type_mismatch_error(info.message);
  case errc::registration_failed:
    throw registration_error(info.message);
  case errc::not_initialized:
    throw not_initialized_error(info.message);
  case errc::actor_died:
    throw actor_died_error(info.message);
  case errc::gcs_unavailable:
    throw gcs_unavailable_error(info.message);
  case errc::owner_died:
    throw owner_died_error(info.message);
  case errc::unschedulable:
    throw unschedulable_error(info.message);
  case errc::object_lost:
    throw object_lost_error(info.message);
  case errc::reconstruction_failed:
    throw reconstruction_failed_error(info.message);
  case errc::permission_denied:
    throw permission_denied_error(info.message);
  case errc::task_cancelled:
    throw task_cancelled_error(info.message);
  case errc::object_store_full:
    throw object_store_full_error(info.message);
  case errc::out_of_memory:
    throw out_of_memory_error(info.message);
  default:
    throw error(info.code, info.message);
  }
}

} // namespace detail

} // namespace prism
