import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The few calls a device makes to the backend, with Basic auth, over URLSession.
struct APIClient: Sendable {
    let base: URL
    let authorization: String
    let session: URLSession

    init(base: URL, user: String, password: String) {
        self.base = base
        self.authorization = "Basic " + Data("\(user):\(password)".utf8).base64EncodedString()
        let configuration = URLSessionConfiguration.ephemeral
        configuration.httpMaximumConnectionsPerHost = 64
        configuration.timeoutIntervalForRequest = 30
        self.session = URLSession(configuration: configuration)
    }

    func call(_ method: String, _ path: String, json: [String: Any]? = nil) async throws -> (status: Int, body: Data, contentType: String?) {
        var request = URLRequest(url: URL(string: path, relativeTo: base)!)
        request.httpMethod = method
        request.setValue(authorization, forHTTPHeaderField: "Authorization")
        if let json {
            request.httpBody = try JSONSerialization.data(withJSONObject: json)
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        }
        let (data, response) = try await session.data(for: request)
        let http = response as? HTTPURLResponse
        return (http?.statusCode ?? 0, data, http?.value(forHTTPHeaderField: "Content-Type"))
    }

    /// The seed's registration: POST /api/register?handle=H, then PUT /api/register/{id}.
    func register(handle: String, tags: [String] = []) async throws -> String {
        let (status, body, _) = try await call("POST", "/api/register?handle=\(handle)")
        guard status == 200, let id = try? JSONDecoder().decode(String.self, from: body) else {
            throw SimulatorError("registration failed: HTTP \(status) \(String(decoding: body, as: UTF8.self))")
        }
        let (putStatus, putBody, _) = try await call("PUT", "/api/register/\(id)", json: ["Platform": "apns", "Handle": handle, "Tags": tags])
        guard putStatus == 200 else { throw SimulatorError("registration failed: HTTP \(putStatus) \(String(decoding: putBody, as: UTF8.self))") }
        return id
    }
}

public struct SimulatorError: Error, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}
