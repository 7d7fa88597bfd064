import Foundation
import RichPushCore

/// What a push service's answer means for the push (RFC 8030 §5, §6; RFC 8292 §4 for VAPID).
struct WebPushServiceAnswer: Sendable {
    let status: Int
    let location: String?
    let retryAfter: String?
    let body: [UInt8]

    /// How long to wait after a 429 that names no time.
    static let defaultBackOff: Duration = .seconds(60)

    var outcome: PushOutcome {
        switch status {
        case 200...202:
            // 201 Created, with the message's URL in Location.
            return .sent(adapterID: location ?? "")
        case 404, 410:
            return .invalidToken(reason: "the push service answered \(status): the subscription expired or was removed\(detail)")
        case 413:
            return .failed(reason: "413: the push service refused the message as too large\(detail)", retryable: false)
        case 401, 403:
            return .failed(reason: "\(status): the push service refused the VAPID token\(detail)", retryable: false)
        case 429:
            // RFC 8030 §8.4: the wait is for this push resource (the subscription), not the service.
            return .deviceDeferred(
                reason: "429: the push service asks to slow down for this subscription\(detail)", after: wait ?? Self.defaultBackOff)
        case 500...599:
            if let wait { return .failedRetryAfter(reason: "\(status) from the push service\(detail)", after: wait) }
            return .failed(reason: "\(status) from the push service\(detail)", retryable: true)
        default:
            // 400 and anything else: the request is wrong and would be wrong again.
            return .failed(reason: "\(status) from the push service\(detail)", retryable: false)
        }
    }

    /// `Retry-After` in seconds (the HTTP-date form is rare from push services; read as absent).
    var wait: Duration? {
        guard let retryAfter, let seconds = Int(retryAfter.trimmingCharacters(in: .whitespaces)), seconds >= 0 else { return nil }
        return .seconds(min(seconds, 3600))
    }

    /// The service's own words: Mozilla's `errno` and `message`, Apple's `reason`, else the body's
    /// start, so the status a user reads says what the service said.
    var detail: String {
        guard !body.isEmpty else { return "" }
        if let object = (try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any] {
            let parts = [object["reason"], object["errno"].map { "errno \($0)" }, object["message"], object["error"]]
                .compactMap { $0.map { "\($0)" } }
            if !parts.isEmpty { return " (" + parts.joined(separator: ", ").prefix(300) + ")" }
        }
        let text = String(decoding: body.prefix(200), as: UTF8.self).filter { !$0.isNewline }
        return text.isEmpty ? "" : " (\(text))"
    }
}
