// A small thread-safe LRU map from a flat integer key to a shared value.
//
// Keys are fixed-capacity arrays of int64 built by the kernels from raw shape
// and dtype numbers, so a cache hit costs one hash of a few dozen integers and
// no oneDNN descriptor construction.
#pragma once

#include <cstdint>
#include <cstring>
#include <list>
#include <memory>
#include <mutex>
#include <vector>
#include <unordered_map>

namespace fw {

struct FlatKey {
    static constexpr int kCapacity = 64;
    int n = 0;
    int64_t v[kCapacity];

    void push(int64_t x) { v[n++] = x; }  // callers stay below kCapacity

    bool operator==(const FlatKey &o) const {
        return n == o.n && std::memcmp(v, o.v, sizeof(int64_t) * n) == 0;
    }
};

struct FlatKeyHash {
    size_t operator()(const FlatKey &k) const noexcept {
        // 64-bit FNV-1a over the words, then a final avalanche.
        uint64_t h = 1469598103934665603ull;
        for (int i = 0; i < k.n; ++i) {
            h ^= static_cast<uint64_t>(k.v[i]);
            h *= 1099511628211ull;
        }
        h ^= h >> 33;
        h *= 0xff51afd7ed558ccdull;
        h ^= h >> 33;
        return static_cast<size_t>(h);
    }
};

struct CacheStats {
    size_t hits, misses, evictions, size, capacity;
};

template <class Value>
class LruCache {
public:
    explicit LruCache(size_t capacity) : capacity_(capacity) {}

    // The cached value, refreshed as most recent, or nullptr (counted a miss).
    std::shared_ptr<Value> get(const FlatKey &key) {
        std::lock_guard<std::mutex> lock(mu_);
        auto it = map_.find(key);
        if (it == map_.end()) {
            ++misses_;
            return nullptr;
        }
        ++hits_;
        order_.splice(order_.begin(), order_, it->second);
        return it->second->second;
    }

    // Inserts value unless another thread inserted the same key first; returns
    // the value that is now cached (or `value` itself when capacity is 0).
    std::shared_ptr<Value> put(const FlatKey &key, std::shared_ptr<Value> value) {
        std::lock_guard<std::mutex> lock(mu_);
        if (capacity_ == 0) return value;
        auto it = map_.find(key);
        if (it != map_.end()) return it->second->second;
        order_.emplace_front(key, std::move(value));
        map_.emplace(key, order_.begin());
        trim_locked();
        return order_.front().second;
    }

    void set_capacity(size_t capacity) {
        std::lock_guard<std::mutex> lock(mu_);
        capacity_ = capacity;
        trim_locked();
    }

    // A snapshot of the cached values, most recently used first (diagnostics).
    std::vector<std::shared_ptr<Value>> values() {
        std::lock_guard<std::mutex> lock(mu_);
        std::vector<std::shared_ptr<Value>> out;
        out.reserve(order_.size());
        for (auto &kv : order_) out.push_back(kv.second);
        return out;
    }

    void clear() {
        std::lock_guard<std::mutex> lock(mu_);
        map_.clear();
        order_.clear();
        hits_ = misses_ = evictions_ = 0;
    }

    CacheStats stats() {
        std::lock_guard<std::mutex> lock(mu_);
        return {hits_, misses_, evictions_, map_.size(), capacity_};
    }

private:
    void trim_locked() {
        // Values are shared_ptr: a primitive evicted while another thread runs
        // it stays alive until that call returns.
        while (map_.size() > capacity_) {
            map_.erase(order_.back().first);
            order_.pop_back();
            ++evictions_;
        }
    }

    using Item = std::pair<FlatKey, std::shared_ptr<Value>>;
    std::mutex mu_;
    std::list<Item> order_;  // most recently used first
    std::unordered_map<FlatKey, typename std::list<Item>::iterator, FlatKeyHash> map_;
    size_t capacity_;
    size_t hits_ = 0, misses_ = 0, evictions_ = 0;
};

}  // namespace fw
