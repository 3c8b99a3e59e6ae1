#include "common/program_file.hpp"

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <sys/stat.h>
#include <tuple>
#include <unistd.h>
#include <utility>

#include <openssl/evp.h>

namespace prism::actors {

namespace {

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

struct sha256_stream::state {
  struct free_ctx {
    void operator()(EVP_MD_CTX* ctx) const {
      EVP_MD_CTX_free(ctx);
    }
  };
  std::unique_ptr<EVP_MD_CTX, free_ctx> ctx{EVP_MD_CTX_new()};
};

sha256_stream::sha256_stream() : state_{std::make_unique<state>()} {
  if (!state_->ctx ||
      EVP_DigestInit_ex(state_->ctx.get(), EVP_sha256(), nullptr) != 1)
    throw std::runtime_error("cannot start a SHA-256 digest");
}

sha256_stream::~sha256_stream() = default;
sha256_stream::sha256_stream(sha256_stream&&) noexcept = default;
sha256_stream& sha256_stream::operator=(sha256_stream&&) noexcept = default;

void sha256_stream::update(const void* data, std::size_t size) {
  EVP_DigestUpdate(state_->ctx.get(), data, size);
}

std::string sha256_stream::finish() {
  std::array<unsigned char, EVP_MAX_MD_SIZE> md;
  unsigned int md_len = 0;
  EVP_DigestFinal_ex(state_->ctx.get(), md.data(), &md_len);
  return to_hex(md.data(), md_len);
}

bool is_sha256_hex(const std::string& text) {
  return text.size() == 64 && std::all_of(text.begin(), text.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
         });
}

bool write_all(int fd, const char* data, std::size_t size) {
  std::size_t done = 0;
  while (done < size) {
    auto n = ::write(fd, data + done, size - done);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return false;
    done += static_cast<std::size_t>(n);
  }
  return true;
}

std::size_t read_at(int fd, char* data, std::size_t size,
                    std::uint64_t offset) {
  std::size_t done = 0;
  while (done < size) {
    auto n = ::pread(fd, data + done, size - done,
                     static_cast<off_t>(offset + done));
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      break;
    done += static_cast<std::size_t>(n);
  }
  return done;
}

program_file_writer::~program_file_writer() {
  discard();
}

program_file_writer::program_file_writer(program_file_writer&& other) noexcept
    : partial_(std::move(other.partial_)), fd_(std::exchange(other.fd_, -1)),
      hash_(std::move(other.hash_)) {}

program_file_writer&
program_file_writer::operator=(program_file_writer&& other) noexcept {
  if (this != &other) {
    discard();
    partial_ = std::move(other.partial_);
    fd_ = std::exchange(other.fd_, -1);
    hash_ = std::move(other.hash_);
  }
  return *this;
}

void program_file_writer::discard() {
  if (fd_ < 0)
    return;
  ::close(fd_);
  fd_ = -1;
  ::unlink(partial_.c_str());
}

std::string program_file_writer::open(std::string partial, unsigned mode) {
  discard();
  partial_ = std::move(partial);
  fd_ = ::open(partial_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
               static_cast<mode_t>(mode));
  if (fd_ < 0)
    return "cannot write " + partial_ + ": " + std::strerror(errno);
  hash_.emplace();
  return {};
}

std::string program_file_writer::append(const char* data, std::size_t size) {
  if (fd_ < 0 || !write_all(fd_, data, size))
    return "cannot write " + partial_ + ": " + std::strerror(errno);
  hash_->update(data, size);
  return {};
}

std::string program_file_writer::commit(const std::string& sha256,
                                        const std::string& path, unsigned mode,
                                        bool sync) {
  if (fd_ < 0)
    return "nothing written to " + partial_;
  auto digest = hash_->finish();
  if (digest != sha256) {
    discard();
    return "the bytes hash to " + digest + ", not " + sha256;
  }
  auto fd = std::exchange(fd_, -1);
  bool ok = ::fchmod(fd, static_cast<mode_t>(mode)) == 0 &&
            (!sync || ::fsync(fd) == 0);
  ok = ::close(fd) == 0 && ok;
  if (!ok || ::rename(partial_.c_str(), path.c_str()) != 0) {
    auto why = "cannot keep " + path + ": " + std::strerror(errno);
    ::unlink(partial_.c_str());
    return why;
  }
  if (sync) {
    auto dir = std::filesystem::path{path}.parent_path().string();
    if (int d = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        d >= 0) {
      ::fsync(d);
      ::close(d);
    }
  }
  return {};
}

file_digest digest_file(const std::string& path) {
  file_digest result;
  std::unique_ptr<std::FILE, file_closer> in{std::fopen(path.c_str(), "rb")};
  if (!in) {
    result.error = std::strerror(errno);
    return result;
  }
  sha256_stream hash;
  std::array<char, 1 << 16> buf;
  std::size_t n = 0;
  while ((n = std::fread(buf.data(), 1, buf.size(), in.get())) > 0) {
    hash.update(buf.data(), n);
    result.size += n;
  }
  if (std::ferror(in.get())) {
    result.error = "read error";
    result.size = 0;
    return result;
  }
  result.sha256 = hash.finish();
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

void remember_program_file(const std::string& path, const std::string& sha256) {
  file_identity now;
  if (!identity_of(path, now))
    return;
  auto& files = checked();
  std::lock_guard<std::mutex> guard{files.mu};
  files.known[std::make_pair(path, sha256)] = now;
}

} // namespace prism::actors
