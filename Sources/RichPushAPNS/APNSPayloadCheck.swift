import Foundation

/// Apple's rules for a payload, checked before sending: at most 4 KiB, a JSON object with an
/// `aps` dictionary; a background push carries `content-available: 1` (the integer) and no
/// `alert`, `badge` or `sound`; an alert push carries an `alert`. One decoding pass: it runs
/// once per notification on the worker's hot path.
package enum APNSPayloadCheck {
    package static func check(_ payload: [UInt8], pushType: String) throws(APNSRejection) {
        guard !payload.isEmpty else { throw APNSRejection(.payloadEmpty, "the payload is empty") }
        guard payload.count <= APNSRequest.maxPayloadBytes else {
            throw APNSRejection(
                .payloadTooLarge, "the payload is \(payload.count) bytes; APNs accepts at most \(APNSRequest.maxPayloadBytes)")
        }
        let aps: APS
        do {
            aps = try JSONDecoder().decode(Payload.self, from: Data(payload)).aps
        } catch DecodingError.keyNotFound(let key, _) where key.stringValue == "aps" {
            throw APNSRejection(.invalidPayload, "the payload has no \"aps\" dictionary")
        } catch DecodingError.typeMismatch(_, let context) where context.codingPath.count == 2 {
            // Strict types: `true` or "1" is not the integer 1 that Apple documents.
            throw APNSRejection(.invalidPayload, "\(context.codingPath[1].stringValue) must be the integer 1")
        } catch DecodingError.typeMismatch(_, let context) where context.codingPath.count == 1 {
            throw APNSRejection(.invalidPayload, "the payload has no \"aps\" dictionary")
        } catch {
            throw APNSRejection(.invalidPayload, "the payload is not a JSON object")
        }
        switch pushType {
        case "background":
            guard aps.contentAvailable == 1 else {
                throw APNSRejection(.invalidPayload, "a background push needs \"content-available\": 1 in aps")
            }
            if let shown = aps.shown.first {
                throw APNSRejection(
                    .invalidPayload,
                    "a background push must not carry \"\(shown)\" (Apple would show or drop it); send an alert push instead")
            }
        default:
            guard aps.shown.contains("alert") else { throw APNSRejection(.invalidPayload, "an alert push needs an \"alert\" in aps") }
        }
    }

    /// ``check(_:pushType:)``'s refusal in words, nil when the payload passes (the NH listener
    /// applies Apple's rules to an `apple` send when it takes it).
    package static func problem(_ payload: [UInt8], pushType: String) -> String? {
        do {
            try check(payload, pushType: pushType)
            return nil
        } catch {
            return error.message
        }
    }

    private struct Payload: Decodable {
        var aps: APS
    }

    private struct APS: Decodable {
        var contentAvailable: Int?
        var mutableContent: Int?
        /// Which of `alert`, `badge`, `sound` are present, whatever their values.
        var shown: [String]

        enum CodingKeys: String, CodingKey, CaseIterable {
            case contentAvailable = "content-available"
            case mutableContent = "mutable-content"
            case alert, badge, sound
        }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            contentAvailable = try container.decodeIfPresent(Int.self, forKey: .contentAvailable)
            mutableContent = try container.decodeIfPresent(Int.self, forKey: .mutableContent)
            shown = [CodingKeys.alert, .badge, .sound].filter { container.contains($0) }.map(\.rawValue)
        }
    }
}
