import Foundation
package import RichPushAPNS
package import RichPushCore

/// Faults `richpush apns-sim` injects into pushes its rules accept, so tests and load tests see
/// what Apple's servers do on a bad day: `--fail "410:5%,429:2%,500:1%"`, `--delay-ms 5-40`,
/// `--goaway-every N`, `--seed S`.
///
/// A dead device token stays dead: 400 (`BadDeviceToken`) and 410 (`Unregistered`) are chosen by
/// a hash of the token and the seed, so every push to that token gets the same answer and a test
/// can know which devices were hit. 403 (`ExpiredProviderToken`), 429, 500 and 503 are transient,
/// drawn per request from a generator seeded with `--seed`.
package struct APNSFaultPlan: Sendable {
    package struct Failure: Sendable, Hashable {
        package let status: Int
        package let reason: APNSReason
        /// 0…1: the share of accepted pushes (or of device tokens, for sticky failures) it hits.
        package let share: Double
        package var isSticky: Bool { status == 400 || status == 410 }
    }

    package var failures: [Failure] = []
    /// Milliseconds each answer is held back, chosen uniformly per request.
    package var delayMilliseconds: ClosedRange<Int>?
    /// Send GOAWAY after every N-th answer on a connection, then close it.
    package var goAwayEvery: Int?
    package var seed: UInt64 = 1
    /// Apple's `timestamp` on 410 answers (ms since 1970); nil: the moment of the answer.
    package var unregisteredAt: Int64?
    /// The sender held mid-run: 429 `TooManyRequests` with `Retry-After` to every push, once.
    package var outage: SimulatedOutage?

    static let reasons: [Int: APNSReason] = [
        400: .badDeviceToken, 403: .expiredProviderToken, 410: .unregistered, 413: .payloadTooLarge,
        429: .tooManyRequests, 500: .internalServerError, 503: .serviceUnavailable,
    ]

    package init() {}

    package var isEmpty: Bool { failures.isEmpty && delayMilliseconds == nil && goAwayEvery == nil && outage == nil }

    /// Parses `--fail`: comma-separated `STATUS:PERCENT%` (statuses 400, 403, 410, 413, 429, 500, 503).
    package static func failures(parsing text: String) throws(APNSConfigurationError) -> [Failure] {
        var failures: [Failure] = []
        for part in text.split(separator: ",") {
            let pieces = part.split(separator: ":")
            guard pieces.count == 2, let status = Int(pieces[0].trimmingCharacters(in: .whitespaces)), let reason = reasons[status] else {
                throw APNSConfigurationError("--fail '\(part)': expected STATUS:PERCENT% with STATUS one of \(reasons.keys.sorted())")
            }
            let percentText = pieces[1].trimmingCharacters(in: .whitespaces)
            guard percentText.hasSuffix("%"), let percent = Double(percentText.dropLast()), (0...100).contains(percent) else {
                throw APNSConfigurationError("--fail '\(part)': the share must be a percentage from 0% to 100%")
            }
            failures.append(Failure(status: status, reason: reason, share: percent / 100))
        }
        let sticky = failures.filter(\.isSticky).map(\.share).reduce(0, +),
            transient = failures.filter { !$0.isSticky }.map(\.share).reduce(0, +)
        guard sticky <= 1, transient <= 1 else { throw APNSConfigurationError("--fail: the shares add up to more than 100%") }
        return failures
    }

    /// Parses `--delay-ms`: `N` or `MIN-MAX`.
    package static func delay(parsing text: String) throws(APNSConfigurationError) -> ClosedRange<Int> {
        let bounds = text.split(separator: "-").compactMap { Int($0.trimmingCharacters(in: .whitespaces)) }
        guard (1...2).contains(bounds.count), bounds.count == text.split(separator: "-").count,
            bounds.allSatisfy({ (0...600_000).contains($0) }),
            bounds[0] <= bounds[bounds.count - 1]
        else {
            throw APNSConfigurationError("--delay-ms must be N or MIN-MAX milliseconds (0 to 600000), not '\(text)'")
        }
        return bounds[0]...bounds[bounds.count - 1]
    }

    /// The failure a push to `deviceToken` gets, if any; `draw` is a fresh uniform 0..<1 number.
    func failure(for deviceToken: Substring, draw: Double) -> Failure? {
        var threshold = 0.0
        let hashed = SimulationRandom.stableUnit(of: deviceToken, seed: seed)
        for failure in failures where failure.isSticky {
            threshold += failure.share
            if hashed < threshold { return failure }
        }
        threshold = 0
        for failure in failures where !failure.isSticky {
            threshold += failure.share
            if draw < threshold { return failure }
        }
        return nil
    }
}
