#include "topology/coalescer.hpp"

#include <memory>

#include "distlock/error.hpp"
#include "net/connection.hpp"
#include "resp/encoder.hpp"
#include "runtime/metrics.hpp"
#include "topology/topology.hpp"

namespace distlock::topology {

// One batch call: owns the arguments' header and the views of every
// operation's keys and arguments (which live with the operations until they
// complete), and hands each operation its part of the reply.
class Coalescer::Batch final : public net::Completion {
 public:
  Batch(Group& group, std::vector<Op>::const_iterator first, std::vector<Op>::const_iterator last)
      : group_(group), ops_(first, last) {}

  std::error_code start(Topology& topology) {
    std::size_t key_count = 0;
    std::size_t arg_count = 0;
    header_.reserve(1 + 3 * ops_.size());
    header_.push_back(std::to_string(ops_.size()));
    for (const Op& op : ops_) {
      header_.push_back(std::to_string(op.info.index));
      header_.push_back(std::to_string(op.keys.size()));
      header_.push_back(std::to_string(op.args.size()));
      key_count += op.keys.size();
      arg_count += op.args.size();
    }
    keys_.reserve(key_count);
    args_.reserve(header_.size() + arg_count);
    args_.assign(header_.begin(), header_.end());
    for (const Op& op : ops_) {
      keys_.insert(keys_.end(), op.keys.begin(), op.keys.end());
      args_.insert(args_.end(), op.args.begin(), op.args.end());
    }
    const Op& first = ops_.front();
    call_.emplace(topology.data_for(first.route_key), script::batch_script(first.info.cls), keys_,
                  args_, this, topology.router(), first.route_key);
    // The batch times out when its oldest operation would have alone.
    call_->made_at(first.made);
    return call_->start();
  }

  // Fails every operation with `ec` (the batch could not be queued).
  void fail(std::error_code ec) {
    for (const Op& op : ops_) op.next->complete(ec, {});
  }

  void complete(std::error_code ec, Value reply) override {
    // The calls that waited behind this one go out before the operations
    // hear their outcome (which may send more).
    group_.call_finished();
    if (ec) {
      fail(ec);
    } else if (reply.is_array() && reply.as_array().size() == ops_.size()) {
      auto& parts = reply.as_array();
      for (std::size_t i = 0; i < ops_.size(); ++i) {
        if (parts[i].is_error() && parts[i].as_string().starts_with("READONLY")) {
          // A demoted master refused the operation's write (Sentinel): as
          // the connection does for a call of its own, it did not run.
          ops_[i].next->complete(errc::connection_lost, {});
        } else {
          ops_[i].next->complete({}, std::move(parts[i]));
        }
      }
    } else {
      // The batch itself was refused (OOM, BUSY, a redirection past the
      // router's bounds): each operation's own call would have been too.
      if (!reply.is_error()) reply = Value::error("ERR unexpected reply to a batch call");
      for (const Op& op : ops_) op.next->complete({}, reply);
    }
    // The ScriptCall completes this as its own last act: deleting both is safe.
    delete this;
  }

 private:
  Group& group_;
  std::vector<Op> ops_;
  std::vector<std::string> header_;
  std::vector<std::string_view> keys_;
  std::vector<std::string_view> args_;
  std::optional<script::ScriptCall> call_;
};

Coalescer::Coalescer(Topology& topology, runtime::Metrics* metrics)
    : topology_(topology), metrics_(metrics) {}

Coalescer::~Coalescer() {
  for (auto& g : groups_) delete g.load(std::memory_order_acquire);
}

Coalescer::Group& Coalescer::group(std::string_view route_key) {
  auto& cell = groups_[topology_.batch_group(route_key) % kGroups];
  Group* g = cell.load(std::memory_order_acquire);
  if (g != nullptr) return *g;
  auto made = std::make_unique<Group>(*this);
  if (cell.compare_exchange_strong(g, made.get(), std::memory_order_acq_rel)) {
    return *made.release();
  }
  return *g;  // another thread made it first
}

std::error_code Coalescer::call(std::optional<script::ScriptCall>& slot,
                                std::string_view route_key,
                                const script::Script& script,
                                script::BatchInfo info,
                                std::span<const std::string_view> keys,
                                std::span<const std::string_view> args,
                                net::Completion* next) {
  Group& g = group(route_key);
  {
    std::lock_guard lock(g.mutex_);
    if (g.in_flight_ > 0) {
      g.waiting_.push_back(
          Op{&slot, route_key, &script, info, keys, args, next, std::chrono::steady_clock::now()});
      return {};
    }
    ++g.in_flight_;
  }
  slot.emplace(topology_.data_for(route_key), script, keys, args, next, topology_.router(),
               route_key);
  slot->watch(&g);
  if (auto ec = slot->start()) {
    g.call_finished();
    return ec;
  }
  if (metrics_) metrics_->script_call(1);
  return {};
}

bool Coalescer::queue_behind(std::string_view route_key,
                             std::span<const std::string_view> args,
                             net::Completion* completion) {
  Group& g = group(route_key);
  std::lock_guard lock(g.mutex_);
  if (g.waiting_.empty()) return false;
  std::string payload;
  resp::encode_command(payload, args);
  g.behind_.push_back(Command{std::string(route_key), std::move(payload), completion});
  return true;
}

std::size_t Coalescer::waiting(std::string_view route_key) {
  Group& g = group(route_key);
  std::lock_guard lock(g.mutex_);
  return g.waiting_.size();
}

void Coalescer::Group::call_finished() {
  std::vector<Op> ops;
  std::vector<Command> behind;
  {
    std::lock_guard lock(mutex_);
    --in_flight_;
    if (waiting_.empty()) return;
    ops.swap(waiting_);
    behind.swap(behind_);
    // One call per run, counted before any goes out.
    std::size_t first = 0;
    for (std::size_t i = 0; i < ops.size(); ++i) {
      if (starts_run(ops, first, i)) {
        first = i;
        ++in_flight_;
      }
    }
  }
  owner_.send(*this, ops, behind);
}

bool Coalescer::starts_run(const std::vector<Op>& ops, std::size_t first, std::size_t i) {
  return i == 0 || ops[i].info.cls != ops[first].info.cls || i - first == kMaxBatch;
}

void Coalescer::send(Group& g, std::vector<Op>& ops, std::vector<Command>& behind) {
  std::size_t first = 0;
  for (std::size_t i = 1; i <= ops.size(); ++i) {
    if (i == ops.size() || starts_run(ops, first, i)) {
      send_run(g, ops, first, i);
      first = i;
    }
  }
  for (Command& c : behind) {
    if (auto ec = topology_.data_for(c.route_key).submit(std::move(c.payload), 1, c.completion)) {
      c.completion->complete(ec, {});
    }
  }
}

void Coalescer::send_run(Group& g, std::vector<Op>& ops, std::size_t first, std::size_t last) {
  std::error_code ec;
  if (last - first == 1) {
    Op& op = ops[first];
    op.slot->emplace(topology_.data_for(op.route_key), *op.script, op.keys, op.args, op.next,
                     topology_.router(), op.route_key);
    (*op.slot)->watch(&g);
    (*op.slot)->made_at(op.made);
    if (!(ec = (*op.slot)->start())) {
      if (metrics_) metrics_->script_call(1);
      return;
    }
    op.next->complete(ec, {});
  } else {
    auto batch = std::make_unique<Batch>(g, ops.begin() + static_cast<std::ptrdiff_t>(first),
                                         ops.begin() + static_cast<std::ptrdiff_t>(last));
    if (!(ec = batch->start(topology_))) {
      (void)batch.release();  // deletes itself on its outcome
      if (metrics_) metrics_->script_call(last - first);
      return;
    }
    batch->fail(ec);
  }
  g.call_finished();
}

}  // namespace distlock::topology
