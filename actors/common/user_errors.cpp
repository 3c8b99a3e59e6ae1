#include "common/user_errors.hpp"

#include <exception>
#include <typeinfo>

namespace prism::actors {

detail::error_info error_of_current_exception(const std::string& function) {
  detail::error_info err;
  err.function_name = function;
  err.code = errc::task_failed;
  try {
    throw;
  } catch (const task_error& e) {
    err.exception_type = e.exception_type();
    err.message = e.exception_message();
    err.function_name = e.function_name();
  } catch (const error& e) {
    err.code = e.retryable() ? errc::task_failed : e.code();
    err.exception_type = detail::demangled_name(typeid(e));
    err.message = e.what();
  } catch (const std::exception& e) {
    err.exception_type = detail::demangled_name(typeid(e));
    err.message = e.what();
  } catch (...) {
    err.exception_type = "unknown";
    err.message = "the code threw something that is not a std::exception";
  }
  return err;
}

} // namespace prism::actors
