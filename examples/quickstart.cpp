// The quick-start program: remote functions, object refs and errors on an
// embedded cluster.
#include <iostream>
#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

#include <prism/prism.hpp>

int square(int x) {
  return x * x;
}

int sum(std::vector<int> xs) {
  return std::accumulate(xs.begin(), xs.end(), 0);
}

// A task may submit tasks and wait for them: its CPU is lent back while it
// waits, so this works even when every CPU is busy.
int sum_of_squares(int n) {
  std::vector<prism::object_ref<int>> refs;
  for (int i = 1; i <= n; ++i)
    refs.push_back(prism::task(square).remote(i));
  return sum(prism::get(refs));
}

std::string greet(const std::string& name) {
  if (name.empty())
    throw std::invalid_argument("no name given");
  return "hello, " + name;
}

PRISM_REMOTE(square, sum, sum_of_squares, greet);

int main() {
  prism::init(); // an embedded cluster with one CPU per hardware thread

  // A task, and its result.
  auto nine = prism::task(square).remote(3);
  std::cout << "square(3) = " << prism::get(nine) << '\n';

  // Refs as arguments: `sum` runs once its input exists.
  auto xs = prism::put(std::vector<int>{1, 2, 3, 4});
  std::cout << "sum(1..4) = " << prism::get(prism::task(sum).remote(xs))
            << '\n';

  // Nested tasks.
  std::cout << "sum_of_squares(10) = "
            << prism::get(prism::task(sum_of_squares).remote(10)) << '\n';

  // A task's exception comes back typed, with its message.
  try {
    prism::get(prism::task(greet).remote(std::string{}));
  } catch (const prism::task_error& e) {
    std::cout << "greet failed: " << e.exception_type() << ": "
              << e.exception_message() << '\n';
  }
  std::cout << prism::get(prism::task(greet).remote(std::string{"prism"}))
            << '\n';

  prism::shutdown();
}
