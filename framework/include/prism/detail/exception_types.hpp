#pragma once

// Exception types named across processes, for `retry_exceptions<Es...>()`:
// a worker tells whether what a task threw is one of the types its caller
// listed (or derived from one), by name. Every process of a program has the
// same names, registered as it starts.

#include <exception>
#include <string>
#include <typeinfo>
#include <vector>

#include "prism/detail/value.hpp"

namespace prism::detail {

/// Whether the exception `e` holds is of one type (or derived from it).
using exception_test = bool (*)(const std::exception_ptr& e);

/// Registers `test` under `name`, the type's demangled name; returns it.
std::string register_exception_type(std::string name, exception_test test);

/// Whether `e` holds an exception of a type registered under one of
/// `names`, or derived from one. Names this process does not know match
/// nothing.
bool exception_is_one_of(const std::exception_ptr& e,
                         const std::vector<std::string>& names);

template <class E>
bool exception_is(const std::exception_ptr& e) {
  try {
    std::rethrow_exception(e);
  } catch (const E&) {
    return true;
  } catch (...) {
    return false;
  }
}

/// The name of exception type `E`, registered with the test for it as the
/// program starts (in every process of the program, so a worker knows the
/// types its callers list).
template <class E>
inline const std::string exception_type_name =
    register_exception_type(demangled_name(typeid(E)), &exception_is<E>);

} // namespace prism::detail
