import Foundation

/// Apple's rules for a payload, checked before sending: at most 4 KiB, a JSON object with an
/// `aps` dictionary; a background push carries `content-available: 1` (the integer) and no
/// `alert`, `badge` or `sound`; an alert push carries an `alert`.
public enum APNSPayloadCheck {
    public static func check(_ payload: [UInt8], pushType: String) throws(APNSRejection) {
        guard !payload.isEmpty else { throw APNSRejection(.payloadEmpty, "the payload is empty") }
        guard payload.count <= APNSRequest.maxPayloadBytes else {
            throw APNSRejection(.payloadTooLarge, "the payload is \(payload.count) bytes; APNs accepts at most \(APNSRequest.maxPayloadBytes)")
        }
        guard let object = try? JSONSerialization.jsonObject(with: Data(payload)) as? [String: Any] else {
            throw APNSRejection(.invalidPayload, "the payload is not a JSON object")
        }
        guard let aps = object["aps"] as? [String: Any] else {
            throw APNSRejection(.invalidPayload, "the payload has no \"aps\" dictionary")
        }
        // Strict types: `true` or "1" is not the integer 1 that Apple documents.
        let typed: Typed
        do {
            typed = try JSONDecoder().decode(Typed.self, from: Data(payload))
        } catch {
            throw APNSRejection(.invalidPayload, "content-available and mutable-content must be the integer 1")
        }
        switch pushType {
        case "background":
            guard typed.aps.contentAvailable == 1 else {
                throw APNSRejection(.invalidPayload, "a background push needs \"content-available\": 1 in aps")
            }
            if let shown = ["alert", "badge", "sound"].first(where: { aps[$0] != nil }) {
                throw APNSRejection(.invalidPayload, "a background push must not carry \"\(shown)\" (Apple would show or drop it); send an alert push instead")
            }
        default:
            guard aps["alert"] != nil else { throw APNSRejection(.invalidPayload, "an alert push needs an \"alert\" in aps") }
        }
    }

    private struct Typed: Decodable {
        struct APS: Decodable {
            var contentAvailable: Int?
            var mutableContent: Int?

            enum CodingKeys: String, CodingKey {
                case contentAvailable = "content-available"
                case mutableContent = "mutable-content"
            }
        }

        var aps: APS
    }
}
