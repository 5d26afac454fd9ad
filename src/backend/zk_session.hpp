// One ZooKeeper session of a Client, over Debian's multi-threaded C client
// (libzookeeper-mt), with every callback brought onto the Client's I/O
// thread.
//
// Why the -mt client and not -st driven by Asio: the session is the lease.
// The -mt client sends its heartbeats from its own thread, so a Client whose
// I/O thread is busy (a slow completion handler, a long on_lease_lost) never
// misses a ping and never loses its locks for it; with -st the pings would
// wait behind the I/O thread's work. Its callbacks only post to the I/O
// thread, so everything distlock does with replies still runs on one thread
// and needs no locking.
//
// The session is re-made after it expires (as Curator does), with the same
// credentials; the holdings of the old one are lost (the ensemble deleted
// their ephemeral nodes), and listeners are told.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "distlock/client_options.hpp"
#include "runtime/executor.hpp"

typedef struct _zhandle zhandle_t;  // NOLINT: the C client's own name

namespace distlock::backend::zk {

// A reply, copied out of the C client's buffers.
struct Reply {
  int rc = 0;                         // ZOK, ZNONODE, ZCONNECTIONLOSS, ...
  std::string path;                   // create: the node made
  std::vector<std::string> children;  // children: the names
  std::optional<std::int64_t> czxid;  // create / exists: the node's czxid
  std::string data;                   // get: the node's data
};

// "h1:p1,[v6]:p2": the servers of `options.seeds` as the C client takes
// them; never the credentials.
std::string host_list(const ClientOptions& options);

class Session : public std::enable_shared_from_this<Session> {
 public:
  // connecting: before the first connection, and after an expiry until the
  // new session is up; suspended: the connection dropped and the session
  // may still be alive; expired: the session ended (told once per session).
  enum class State { connecting, connected, suspended, expired, closed };
  using Done = std::function<void(const Reply&)>;
  using Fired = std::function<void(int type)>;
  using Listener = std::function<void(State)>;

  Session(const ClientOptions& options, runtime::Executor& executor);
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  // Blocks until the first session is connected; throws Error
  // (connection_failed naming the servers, invalid_argument for a server
  // list the C client refuses). Not on the I/O thread.
  void connect();
  // Ends the session (the ensemble deletes its ephemeral nodes at once).
  // Every call still in flight completes with ZCLOSING. Not on the I/O
  // thread; idempotent.
  void close() noexcept;

  // The calls below: I/O thread only. `done` runs on the I/O thread, always
  // (rc ZCLOSING after close, ZINVALIDSTATE when no session is up).
  void create(const std::string& path, const std::string& data, int flags, Done done);
  void children(const std::string& path, Done done);
  // getData with a one-shot watch: `fired` runs once with the event type
  // when the node changes or is deleted (never for session events). No
  // watch is left when the node does not exist (rc ZNONODE).
  void get_watch(const std::string& path, Fired fired, Done done);
  // exists with a one-shot watch (left even when the node does not exist).
  void exists_watch(const std::string& path, Fired fired, Done done);
  // exists without a watch: rc ZOK with the node's czxid, or ZNONODE.
  void exists(const std::string& path, Done done);
  void remove(const std::string& path, Done done);

  State state() const noexcept { return state_; }
  // Called on every state change, on the I/O thread. Returns an id for
  // unlisten().
  std::uint64_t listen(Listener listener);
  void unlisten(std::uint64_t id);
  // The session timeout the ensemble granted (0 before the first connect).
  std::chrono::milliseconds negotiated_timeout() const noexcept;
  runtime::Executor& executor() noexcept { return executor_; }
  const ClientOptions& options() const noexcept { return options_; }

  // For the C client's callbacks (zk_session.cpp), any thread: bring work
  // onto the I/O thread. Dropped once the Session is gone.
  struct Call;
  struct WatchContext;
  void post(std::function<void()> f);
  void post_reply(Done done, Reply reply);
  // I/O thread: the session's state changed to the C client's `zk_state`.
  void on_session_event(zhandle_t* handle, int zk_state);
  void on_watch_event(std::uint64_t id, int type);

 private:
  void set_state(State s);
  // Makes a new handle (the first, or after an expiry). Throws Error when
  // the C client refuses the server list.
  zhandle_t* open_handle();
  // I/O thread: the handle to call now, or null (then `done` got
  // ZINVALIDSTATE or ZCLOSING).
  zhandle_t* usable(Done& done);
  // One asynchronous call: `issue` makes it on the handle with a Call as its
  // completion's data and returns the C client's immediate result.
  template <class Issue>
  void send(Done done, Issue issue);
  WatchContext* watch_context(Fired fired);
  // `done`, which first forgets watch `id` unless the reply is ZOK or
  // `kept_also` (the C client then holds no watch for it).
  Done forget_watch_unless(Done done, std::uint64_t id, int kept_also);

  const ClientOptions options_;
  runtime::Executor& executor_;
  const std::string hosts_;

  mutable std::mutex mutex_;  // guards handle_, old_handles_, closed_, connected_once_
  std::condition_variable connected_cv_;
  zhandle_t* handle_ = nullptr;
  std::vector<zhandle_t*> old_handles_;  // expired, closed in close()
  bool closed_ = false;
  bool connected_once_ = false;
  std::atomic<int> negotiated_ms_{0};

  // I/O thread only.
  State state_ = State::connecting;
  std::uint64_t next_id_ = 1;
  std::map<std::uint64_t, Listener> listeners_;
  std::map<std::uint64_t, Fired> watches_;
  // Watch contexts the C client may still call, by watch id: freed when
  // their event has come (the C client calls a watch once), the rest in the
  // destructor, after every handle is closed. Guarded by mutex_.
  std::map<std::uint64_t, std::unique_ptr<WatchContext>> contexts_;
};

}  // namespace distlock::backend::zk
