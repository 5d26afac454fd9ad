// prometheus_text: the text exposition format 0.0.4
// (https://prometheus.io/docs/instrumenting/exposition_formats/).
#include <charconv>

#include "distlock/client.hpp"
#include "distlock/error.hpp"
#include "distlock/metrics.hpp"

namespace distlock {
namespace {

constexpr std::array<std::string_view, 3> kLostReasons = {"expired", "taken", "client_closed"};

bool valid_label_name(std::string_view name) {
  if (name.empty() || name.starts_with("__")) return false;
  for (std::size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    const bool letter = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
    if (!letter && !(i > 0 && c >= '0' && c <= '9')) return false;
  }
  return true;
}

// Label values escape backslash, double quote and line feed.
void append_escaped(std::string& out, std::string_view value) {
  for (const char c : value) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '"') {
      out += "\\\"";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
}

// Shortest round-trip text in fixed notation (0.0005, 1, 2.5, 300), as
// Prometheus clients print bucket bounds (never 5e-04).
void append_number(std::string& out, double v) {
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::fixed);
  if (r.ec != std::errc()) r = std::to_chars(buf, buf + sizeof buf, v);  // too long: 1e+300
  out.append(buf, r.ptr);
}

void append_number(std::string& out, std::uint64_t v) {
  out += std::to_string(v);
}

void append_number(std::string& out, std::int64_t v) {
  out += std::to_string(v);
}

class Writer {
 public:
  Writer(const MetricsSnapshot& s, const PrometheusOptions& o) {
    if (o.client_id_label) constant("client", s.client_id);
    for (const auto& [name, value] : o.labels) {
      if (!valid_label_name(name) || name == "le") {
        throw Error(errc::invalid_argument,
                    "prometheus_text: '" + name + "' is not a valid constant label name");
      }
      constant(name, value);
    }
  }

  void family(std::string_view name, std::string_view type, std::string_view help) {
    out_ += "# HELP ";
    out_ += name;
    out_ += ' ';
    out_ += help;
    out_ += "\n# TYPE ";
    out_ += name;
    out_ += ' ';
    out_ += type;
    out_ += '\n';
  }

  // One sample: `labels` is "" or `a="x",b="y"` (already escaped).
  template <class V>
  void sample(std::string_view name, std::string_view labels, V value) {
    out_ += name;
    if (!constants_.empty() || !labels.empty()) {
      out_ += '{';
      out_ += constants_;
      if (!constants_.empty() && !labels.empty()) out_ += ',';
      out_ += labels;
      out_ += '}';
    }
    out_ += ' ';
    append_number(out_, value);
    out_ += '\n';
  }

  void histogram(std::string_view name, std::string_view labels, const HistogramSnapshot& h) {
    const std::string base(name);
    const std::string sep = labels.empty() ? "" : ",";
    for (std::size_t i = 0; i < h.buckets.size(); ++i) {
      std::string l(labels);
      l += sep + "le=\"";
      if (i < HistogramSnapshot::kBounds.size()) {
        append_number(l, HistogramSnapshot::kBounds[i]);
      } else {
        l += "+Inf";
      }
      l += '"';
      sample(base + "_bucket", l, h.buckets[i]);
    }
    sample(base + "_sum", labels, h.sum);
    sample(base + "_count", labels, h.count);
  }

  void histogram(std::string_view name, const BatchSizeSnapshot& h) {
    const std::string base(name);
    for (std::size_t i = 0; i < h.buckets.size(); ++i) {
      std::string l = "le=\"";
      if (i < BatchSizeSnapshot::kBounds.size()) {
        append_number(l, BatchSizeSnapshot::kBounds[i]);
      } else {
        l += "+Inf";
      }
      l += '"';
      sample(base + "_bucket", l, h.buckets[i]);
    }
    sample(base + "_sum", "", h.sum);
    sample(base + "_count", "", h.count);
  }

  std::string take() { return std::move(out_); }

 private:
  void constant(std::string_view name, std::string_view value) {
    if (!constants_.empty()) constants_ += ',';
    constants_ += name;
    constants_ += "=\"";
    append_escaped(constants_, value);
    constants_ += '"';
  }

  std::string constants_;
  std::string out_;
};

std::string label(std::string_view name, std::string_view value) {
  std::string l(name);
  l += "=\"";
  append_escaped(l, value);
  l += '"';
  return l;
}

std::string primitive_label(std::size_t p) {
  return label("primitive", to_string(static_cast<MetricPrimitive>(p)));
}

void write_acquires(Writer& w, const MetricsSnapshot& s) {
  w.family("distlock_acquires_total", "counter",
           "Acquires that finished, by primitive and outcome.");
  for (std::size_t p = 0; p < kMetricPrimitives; ++p) {
    for (std::size_t r = 0; r < kAcquireResults; ++r) {
      w.sample(
          "distlock_acquires_total",
          primitive_label(p) + "," + label("outcome", to_string(static_cast<AcquireResult>(r))),
          s.primitives[p].acquires[r]);
    }
  }
  w.family("distlock_acquires_contended_total", "counter",
           "Acquires that found the primitive taken and waited.");
  for (std::size_t p = 0; p < kMetricPrimitives; ++p) {
    w.sample("distlock_acquires_contended_total", primitive_label(p), s.primitives[p].contended);
  }
  w.family("distlock_acquire_wait_seconds", "histogram",
           "Time from an acquire call to its outcome, in seconds.");
  for (std::size_t p = 0; p < kMetricPrimitives; ++p) {
    w.histogram("distlock_acquire_wait_seconds", primitive_label(p), s.primitives[p].wait);
  }
  w.family("distlock_hold_seconds", "histogram",
           "Time from acquiring a holding to releasing it, in seconds.");
  for (std::size_t p = 0; p < kMetricPrimitives; ++p) {
    w.histogram("distlock_hold_seconds", primitive_label(p), s.primitives[p].hold);
  }
}

void write_leases(Writer& w, const MetricsSnapshot& s) {
  w.family("distlock_renewals_total", "counter",
           "Watchdog lease renewals, one per lease per renewal call, by outcome.");
  w.sample("distlock_renewals_total", label("outcome", "ok"), s.renewals_ok);
  w.sample("distlock_renewals_total", label("outcome", "failed"), s.renewals_failed);
  w.family("distlock_leases_lost_total", "counter", "Leases lost while held, by reason.");
  for (std::size_t i = 0; i < kLostReasons.size(); ++i) {
    w.sample("distlock_leases_lost_total", label("reason", kLostReasons[i]), s.leases_lost[i]);
  }
  w.family("distlock_reconnects_total", "counter",
           "Reconnects of the data connection after it was lost.");
  w.sample("distlock_reconnects_total", "", s.reconnects);
  w.family("distlock_script_batch_size", "histogram",
           "Operations per script call (coalescing): count = calls, sum = operations.");
  w.histogram("distlock_script_batch_size", s.script_batches);
  w.family("distlock_commands_in_flight", "gauge",
           "Commands queued or awaiting their reply on the data connection.");
  w.sample("distlock_commands_in_flight", "", s.commands_in_flight);
  w.family("distlock_held", "gauge", "Holdings held now: acquired, not released, not lost.");
  w.sample("distlock_held", "", s.held_now);
}

}  // namespace

std::string prometheus_text(const MetricsSnapshot& snapshot, const PrometheusOptions& options) {
  Writer w(snapshot, options);
  write_acquires(w, snapshot);
  write_leases(w, snapshot);
  return w.take();
}

std::string prometheus_text(const Client& client, const PrometheusOptions& options) {
  return prometheus_text(client.metrics(), options);
}

}  // namespace distlock
