#include "runtime/watchdog.hpp"

#include <array>
#include <atomic>
#include <map>
#include <string_view>
#include <vector>

#include "distlock/error.hpp"
#include "script/scripts.hpp"
#include "topology/topology.hpp"

namespace distlock::runtime {

struct RenewalFailureCounts {
  std::atomic<std::size_t> timed_out{0};
  std::atomic<std::size_t> connection_lost{0};
  std::atomic<std::size_t> other{0};
  std::atomic<std::size_t> not_replicated{0};
  Metrics* metrics = nullptr;  // renewals by outcome

  void count(std::error_code ec) {
    if (ec == errc::timeout) {
      ++timed_out;
    } else if (ec == errc::connection_lost) {
      ++connection_lost;
    } else {
      ++other;
    }
  }
};

namespace {

using Reason = LeaseLostEvent::Reason;

// Every char value, so a Renewal::Kind can be viewed as a one-character
// script argument without allocating.
constexpr auto kKindChars = [] {
  std::array<char, 256> all{};
  for (int i = 0; i < 256; ++i) all[static_cast<std::size_t>(i)] = static_cast<char>(i);
  return all;
}();

// One renewal script call: owns its leases and arguments until the reply.
class RenewCall final : public net::Completion {
 public:
  // check_only: confirm ownership without extending (fixed leases).
  RenewCall(std::vector<std::shared_ptr<LeaseState>> leases,
            Clock::time_point sent,
            bool check_only,
            std::shared_ptr<RenewalFailureCounts> failures,
            topology::ReplicaAck ack)
      : leases_(std::move(leases)),
        sent_(sent),
        check_only_(check_only),
        failures_(std::move(failures)),
        ack_(ack),
        outstanding_(ack.wanted() && !check_only ? 2 : 1) {
    keys_.reserve(leases_.size() * 2);
    args_.reserve(leases_.size() * 3);
    for (const auto& l : leases_) {
      const Renewal& r = l->renewal;
      keys_.push_back(r.key);
      keys_.push_back(r.key2.empty() ? std::string_view(r.key) : std::string_view(r.key2));
      args_.push_back(std::string_view(&kKindChars[static_cast<unsigned char>(r.kind)], 1));
      args_.push_back(r.member);
      args_.push_back(check_only_ ? std::string_view("0") : std::string_view(l->ttl_text));
    }
  }

  // Sends the call and, when acknowledgements are wanted, WAIT behind it;
  // the call deletes itself once every reply it waits for is in.
  std::error_code start(topology::Topology& topology) {
    if (auto ec = send(topology)) return ec;
    if (outstanding_ == 1) return {};
    const auto ec = topology::send_replica_wait(topology, keys_.front(), ack_,
                                                [this](std::error_code e, std::int64_t acked) {
                                                  // Before the script's own reply, it counted
                                                  // nothing of a re-sent (NOSCRIPT) script call.
                                                  acked_ = !e && acked >= ack_.replicas && replied_;
                                                  finish_one();
                                                });
    if (ec) {
      acked_ = false;
      finish_one();
    }
    return {};
  }

  void complete(std::error_code ec, Value reply) override {
    replied_ = true;
    ec_ = ec;
    reply_ = std::move(reply);
    finish_one();
  }

 private:
  void finish_one() {
    if (--outstanding_ > 0) return;
    std::unique_ptr<RenewCall> self(this);
    apply(ec_, reply_);
  }

  std::error_code send(topology::Topology& topology) {
    // Every key of a batch shares its group (node or slot): route by the first.
    return topology.call(call_, keys_.front(), script::scripts().renew, keys_, args_, this);
  }

  void apply(std::error_code ec, const Value& reply) {
    // A failed call changes nothing: the expiry check marks leases lost if
    // their deadline passes before a later renewal gets through.
    if (ec || !reply.is_array() || reply.as_array().size() != leases_.size()) {
      record(false, leases_.size());
      return failures_->count(ec ? ec : make_error_code(errc::protocol_error));
    }
    if (!acked_) ++failures_->not_replicated;
    const auto& results = reply.as_array();
    for (std::size_t i = 0; i < leases_.size(); ++i) {
      LeaseState& lease = *leases_[i];
      if (lease.released.load() || lease.lost()) continue;  // a lost lease stays lost
      const bool held = results[i].is_integer() && results[i].as_integer() == 1;
      record(held && acked_, 1);
      if (held) {
        if (!check_only_ && acked_) lease.confirm(sent_);
      } else if (results[i].is_integer() && results[i].as_integer() == -1) {
        // A quorum that could not confirm it on a majority in time (too
        // few nodes answered): lost now, as an expiry, not a takeover.
        lease.mark_lost(Reason::expired);
      } else {
        lease.mark_lost(Reason::taken);
      }
    }
  }

  // Renewals only: a check of fixed leases renews nothing.
  void record(bool ok, std::size_t n) {
    if (!check_only_ && failures_->metrics) failures_->metrics->renewals(ok, n);
  }

 private:
  std::vector<std::shared_ptr<LeaseState>> leases_;
  Clock::time_point sent_;
  bool check_only_;
  std::shared_ptr<RenewalFailureCounts> failures_;
  const topology::ReplicaAck ack_;
  int outstanding_;  // the script's reply, and WAIT's when wanted
  bool replied_ = false;
  bool acked_ = true;
  std::error_code ec_;
  Value reply_;
  std::vector<std::string_view> keys_;
  std::vector<std::string_view> args_;
  std::optional<script::ScriptCall> call_;
};

}  // namespace

Watchdog::Watchdog(topology::Topology& topology,
                   std::chrono::milliseconds period,
                   asio::io_context& io,
                   topology::ReplicaAck ack,
                   Metrics* metrics)
    : topology_(topology),
      period_(period),
      ack_(ack),
      failures_(std::make_shared<RenewalFailureCounts>()),
      tick_timer_(io),
      expiry_timer_(io) {
  failures_->metrics = metrics;
}

void Watchdog::add(const std::shared_ptr<LeaseState>& lease) {
  std::lock_guard lock(mutex_);
  leases_.emplace(lease.get(), lease);
}

void Watchdog::remove(const LeaseState* lease) {
  std::lock_guard lock(mutex_);
  if (auto it = leases_.find(lease); it != leases_.end()) it->second->hold_record.end();
  leases_.erase(lease);
}

std::size_t Watchdog::size() const {
  std::lock_guard lock(mutex_);
  return leases_.size();
}

Watchdog::RenewalFailures Watchdog::renewal_failures() const {
  return {failures_->timed_out.load(), failures_->connection_lost.load(), failures_->other.load(),
          failures_->not_replicated.load()};
}

void Watchdog::activated(const LeaseState& lease) {
  if (closed_) return;
  if (lease.watchdog) arm_tick();
  arm_expiry(lease.deadline());
}

void Watchdog::arm_tick() {
  if (tick_armed_ || closed_) return;
  tick_armed_ = true;
  tick_timer_.expires_after(period_);
  tick_timer_.async_wait([this](std::error_code ec) {
    tick_armed_ = false;
    if (ec || closed_) return;
    tick(false);
  });
}

void Watchdog::renew_all_now() {
  if (!closed_) tick(true);
}

void Watchdog::tick(bool all) {
  const auto now = Clock::now();
  // A lease is due when its last renewal went out at least half a period ago:
  // with a tick every period, each lease is renewed every one to one and a
  // half periods, leaving at least half the lease as margin.
  const auto due_before = now - period_ / 2;
  std::vector<std::shared_ptr<LeaseState>> due;
  std::vector<std::shared_ptr<LeaseState>> fixed;  // checked, not extended (all == true)
  bool any_watchdog = false;
  {
    std::lock_guard lock(mutex_);
    for (const auto& [ptr, lease] : leases_) {
      if (!lease->active.load() || lease->released.load() || lease->lost()) continue;
      if (!lease->watchdog) {
        if (all) fixed.push_back(lease);
        continue;
      }
      any_watchdog = true;
      if (all || lease->last_renewal_sent() <= due_before) due.push_back(lease);
    }
  }
  send_batches(std::move(due), false);
  send_batches(std::move(fixed), true);
  if (any_watchdog) arm_tick();
}

void Watchdog::send_batches(std::vector<std::shared_ptr<LeaseState>> leases, bool check_only) {
  // One call per batch group (node, or slot under Cluster), at most kBatch
  // holdings each; kinds and lease lengths mix freely.
  std::map<std::uint64_t, std::vector<std::shared_ptr<LeaseState>>> groups;
  for (auto& l : leases) {
    groups[topology_.batch_group(l->renewal.key)].push_back(std::move(l));
  }
  for (auto& [group, members] : groups) {
    for (std::size_t i = 0; i < members.size(); i += kBatch) {
      const auto end = std::min(members.size(), i + kBatch);
      send_batch({members.begin() + static_cast<std::ptrdiff_t>(i),
                  members.begin() + static_cast<std::ptrdiff_t>(end)},
                 check_only);
    }
  }
}

void Watchdog::send_batch(std::vector<std::shared_ptr<LeaseState>> batch, bool check_only) {
  const auto sent = Clock::now();
  if (!check_only) {
    for (const auto& l : batch) l->renewal_sent(sent);
  }
  const auto n = batch.size();
  auto* call = new RenewCall(std::move(batch), sent, check_only, failures_, ack_);
  if (call->start(topology_)) {  // not queued (closed or full): retried next tick
    delete call;
    ++failures_->other;
    if (!check_only && failures_->metrics) failures_->metrics->renewals(false, n);
  }
}

void Watchdog::arm_expiry(Clock::time_point at) {
  if (closed_ || at >= expiry_at_) return;
  expiry_at_ = at;
  expiry_timer_.expires_at(at);
  expiry_timer_.async_wait([this](std::error_code ec) {
    if (ec || closed_) return;  // cancelled by a re-arm or close
    expiry_at_ = Clock::time_point::max();
    check_expiry();
  });
}

void Watchdog::check_expiry() {
  const auto now = Clock::now();
  std::vector<std::shared_ptr<LeaseState>> expired;
  auto next = Clock::time_point::max();
  {
    std::lock_guard lock(mutex_);
    for (const auto& [ptr, lease] : leases_) {
      if (!lease->active.load() || lease->released.load() || lease->lost()) continue;
      const auto deadline = lease->deadline();
      if (deadline <= now) {
        expired.push_back(lease);
      } else if (deadline < next) {
        next = deadline;
      }
    }
  }
  for (const auto& lease : expired) lease->mark_lost(Reason::expired);
  if (next != Clock::time_point::max()) arm_expiry(next);
}

void Watchdog::close() {
  if (closed_) return;
  closed_ = true;
  tick_timer_.cancel();
  expiry_timer_.cancel();
  std::unordered_map<const LeaseState*, std::shared_ptr<LeaseState>> leases;
  {
    std::lock_guard lock(mutex_);
    leases.swap(leases_);
  }
  for (const auto& [ptr, lease] : leases) {
    if (lease->active.load() && !lease->released.load()) lease->mark_lost(Reason::client_closed);
  }
}

}  // namespace distlock::runtime
