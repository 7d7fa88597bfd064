import Synchronization

/// FCM's send limits as the simulator enforces them ("Throttling and quotas"): a project may
/// send `projectPerMinute` requests in any rolling minute (600,000 by default; refused requests
/// count too), and one device may get `devicePerMinute` messages in a sliding minute (240). Past either,
/// FCM answers 429 `QUOTA_EXCEEDED` with a `Retry-After`.
package final class FCMQuota: Sendable {
    package struct Limits: Sendable {
        package var projectPerMinute: Int
        package var devicePerMinute: Int

        package init(projectPerMinute: Int = 600_000, devicePerMinute: Int = 240) {
            self.projectPerMinute = projectPerMinute
            self.devicePerMinute = devicePerMinute
        }
    }

    struct State {
        /// Requests per second of the last 60 seconds, indexed by second modulo 60.
        var seconds = [(second: Int64, count: Int)](repeating: (-1, 0), count: 60)
        /// Messages per device in its last two minutes: a sliding minute, estimated from the
        /// previous minute's count weighted by how much of it is still in the window (a per-device
        /// log of times would cost kilobytes per device).
        var devices: [String: (minute: Int64, count: Int, previous: Int)] = [:]
        var pruned: Int64 = -1
    }

    let limits: Limits
    private let state = Mutex(State())

    package init(limits: Limits) {
        self.limits = limits
    }

    /// Which limit refused a request: the project's or the device's (FCM says which in a
    /// `google.rpc.QuotaFailure` detail).
    enum Refusal: Equatable {
        case project(wait: Int)
        case device(wait: Int)
    }

    /// Counts one request for `token` at `now` (seconds since 1970): nil when within the limits,
    /// or which limit refused it and the seconds to wait.
    func admit(token: String, now: Double) -> Refusal? {
        let second = Int64(now)
        return state.withLock { state in
            let slot = Int(second % 60)
            if state.seconds[slot].second != second { state.seconds[slot] = (second, 0) }
            state.seconds[slot].count += 1
            var inWindow = 0
            var oldest = second
            for entry in state.seconds where second - entry.second < 60 {
                inWindow += entry.count
                oldest = min(oldest, entry.second)
            }
            if inWindow > limits.projectPerMinute {
                // Until the oldest second still in the window leaves it.
                return .project(wait: Int(max(1, oldest + 60 - second)))
            }
            let minute = second / 60
            if state.pruned != minute {
                // Devices quiet for two minutes no longer count.
                state.pruned = minute
                state.devices = state.devices.filter { $0.value.minute >= minute - 1 }
            }
            var entry = state.devices[token] ?? (minute, 0, 0)
            if entry.minute != minute {
                entry = (minute, 0, entry.minute == minute - 1 ? entry.count : 0)
            }
            let elapsed = (now - Double(minute * 60)) / 60
            let estimate = Double(entry.previous) * (1 - elapsed) + Double(entry.count + 1)
            guard estimate <= Double(limits.devicePerMinute) else {
                state.devices[token] = entry
                return .device(wait: Int(max(1, (minute + 1) * 60 - second)))
            }
            entry.count += 1
            state.devices[token] = entry
            return nil
        }
    }
}
