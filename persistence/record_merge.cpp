#include "record_merge.hpp"

#include <string>

#include <rocksdb/merge_operator.h>
#include <rocksdb/slice.h>

namespace prism::persistence {

namespace {

class append_operator : public rocksdb::AssociativeMergeOperator {
public:
  bool Merge(const rocksdb::Slice&, const rocksdb::Slice* existing,
             const rocksdb::Slice& value, std::string* merged,
             rocksdb::Logger*) const override {
    merged->clear();
    if (existing) {
      merged->reserve(existing->size() + value.size());
      merged->assign(existing->data(), existing->size());
    }
    merged->append(value.data(), value.size());
    return true;
  }

  const char* Name() const override {
    // Stored in the store's options file: never rename it.
    return "prism.record_append";
  }
};

} // namespace

std::shared_ptr<rocksdb::MergeOperator> record_merge_operator() {
  static const auto op = std::make_shared<append_operator>();
  return op;
}

} // namespace prism::persistence
