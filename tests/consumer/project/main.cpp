// Calls one remote function through an installed Prism, the way a new user's
// first program does.

#include <exception>
#include <iostream>

#include <prism/prism.hpp>

int add_one(int x) {
  return x + 1;
}

PRISM_REMOTE(add_one);

int main() {
  try {
    prism::init();
    auto result = prism::get(prism::task(add_one).remote(41));
    prism::shutdown();
    if (result != 42) {
      std::cerr << "consumer: expected 42, got " << result << '\n';
      return 1;
    }
  } catch (const std::exception& e) {
    std::cerr << "consumer: " << e.what() << '\n';
    prism::shutdown();
    return 1;
  }
  std::cout << "consumer ok\n";
  return 0;
}
