#include "common/program_file.hpp"

#include <array>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <sys/stat.h>
#include <tuple>

#include <openssl/evp.h>

namespace prism::actors {

namespace {

struct evp_ctx_deleter {
  void operator()(EVP_MD_CTX* ctx) const {
    EVP_MD_CTX_free(ctx);
  }
};

struct file_closer {
  void operator()(std::FILE* f) const {
    std::fclose(f);
  }
};

std::string to_hex(const unsigned char* bytes, unsigned int n) {
  static constexpr char digits[] = "0123456789abcdef";
  std::string result;
  result.reserve(2 * n);
  for (unsigned int i = 0; i < n; ++i) {
    result.push_back(digits[bytes[i] >> 4]);
    result.push_back(digits[bytes[i] & 0x0f]);
  }
  return result;
}

/// What identifies a file's contents without reading it.
using file_identity =
    std::tuple<dev_t, ino_t, off_t, std::int64_t, std::int64_t>;

struct checked_files {
  std::mutex mu;
  /// Files found to hold a program, by path and digest.
  std::map<std::pair<std::string, std::string>, file_identity> known;
};

checked_files& checked() {
  static checked_files files;
  return files;
}

bool identity_of(const std::string& path, file_identity& out) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0)
    return false;
  out = file_identity{st.st_dev, st.st_ino, st.st_size, st.st_mtim.tv_sec,
                      st.st_mtim.tv_nsec};
  return true;
}

} // namespace

file_digest digest_file(const std::string& path) {
  file_digest result;
  std::unique_ptr<std::FILE, file_closer> in{std::fopen(path.c_str(), "rb")};
  if (!in) {
    result.error = std::strerror(errno);
    return result;
  }
  std::unique_ptr<EVP_MD_CTX, evp_ctx_deleter> ctx{EVP_MD_CTX_new()};
  if (!ctx || EVP_DigestInit_ex(ctx.get(), EVP_sha256(), nullptr) != 1) {
    result.error = "cannot start a SHA-256 digest";
    return result;
  }
  std::array<char, 1 << 16> buf;
  std::size_t n = 0;
  while ((n = std::fread(buf.data(), 1, buf.size(), in.get())) > 0) {
    EVP_DigestUpdate(ctx.get(), buf.data(), n);
    result.size += n;
  }
  if (std::ferror(in.get())) {
    result.error = "read error";
    result.size = 0;
    return result;
  }
  std::array<unsigned char, EVP_MAX_MD_SIZE> md;
  unsigned int md_len = 0;
  EVP_DigestFinal_ex(ctx.get(), md.data(), &md_len);
  result.sha256 = to_hex(md.data(), md_len);
  return result;
}

std::string check_program_file(const std::string& path,
                               const std::string& sha256, std::uint64_t size) {
  file_identity before;
  if (!identity_of(path, before))
    return path + " is not on this host (" + std::strerror(errno) + ")";
  if (static_cast<std::uint64_t>(std::get<2>(before)) != size)
    return path + " is not the job's program: it has " +
           std::to_string(std::get<2>(before)) + " bytes, the program " +
           std::to_string(size);
  auto& files = checked();
  auto key = std::make_pair(path, sha256);
  {
    std::lock_guard<std::mutex> guard{files.mu};
    if (auto i = files.known.find(key);
        i != files.known.end() && i->second == before)
      return {};
  }
  auto digest = digest_file(path);
  if (!digest.error.empty())
    return "cannot read " + path + ": " + digest.error;
  file_identity after;
  if (digest.sha256 != sha256 || !identity_of(path, after) || after != before)
    return path + " is not the job's program (its SHA-256 differs)";
  std::lock_guard<std::mutex> guard{files.mu};
  files.known[key] = after;
  return {};
}

} // namespace prism::actors
