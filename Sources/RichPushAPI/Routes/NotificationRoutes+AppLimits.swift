import RichPushCore

/// The app's limits (``AppLimits``), over all its users, checked before a notification is
/// created: the audience one notification may address (422), the notifications a minute and the
/// payload bytes held within the retention (429 with `Retry-After`). An app without limits costs
/// nothing here.
extension NotificationRoutes {
    /// Throws 422 `app_limit_audience` when `target` addresses more devices than the app allows.
    func checkAudience(_ target: String) async throws {
        guard appLimits.audience > 0 else { return }
        let count = try await audience(of: target, beyond: appLimits.audience)
        if count > appLimits.audience {
            throw APIError.unprocessable(
                "the target '\(target)' addresses more than \(appLimits.audience) devices, app '\(app)''s limit (limits.audience)",
                code: "app_limit_audience")
        }
    }

    /// Charges the app one notification per payload size, in order; throws the first refusal as a
    /// 429 naming the limit (for one notification), or returns each one's (for a batch).
    @discardableResult
    func chargeApp(_ sizes: [Int], throwing: Bool = true) async throws -> [APIError?] {
        guard appLimits.notificationsPerMinute > 0 || appLimits.payloadBytes > 0 else { return sizes.map { _ in nil } }
        let refusals = try await notifications.chargeQuotas(
            user: AppLimits.quotaSubject, bytes: sizes,
            limits: QuotaLimits(perMinute: appLimits.notificationsPerMinute, liveBytes: appLimits.payloadBytes))
        let errors = refusals.map { $0.map(appLimitError) }
        if throwing, let first = errors.compactMap({ $0 }).first { throw first }
        return errors
    }

    /// The batch items within the app's limits (audience, then rate and bytes, charged in one
    /// call); each other item's outcome is its refusal, and its idempotency key is freed.
    func withinAppLimits(_ items: [Pending], outcomes: inout [BatchOutcome?], context: APIRequestContext) async throws -> [Pending] {
        guard !appLimits.isNone else { return items }
        var audiences: [String: APIError?] = [:]
        var allowed: [Pending] = []
        var refused: [Pending] = []
        func refuse(_ item: Pending, _ error: APIError) {
            outcomes[item.index] = .rejected(error)
            refused.append(item)
        }
        for item in items {
            if audiences[item.draft.target] == nil {
                do {
                    try await checkAudience(item.draft.target)
                    audiences[item.draft.target] = .some(nil)
                } catch let error as APIError {
                    audiences[item.draft.target] = .some(error)
                }
            }
            if let refusal = audiences[item.draft.target] ?? nil { refuse(item, refusal) } else { allowed.append(item) }
        }
        var within: [Pending] = []
        for (item, refusal) in zip(allowed, try await chargeApp(allowed.map(\.draft.payload.count), throwing: false)) {
            if let refusal { refuse(item, refusal) } else { within.append(item) }
        }
        let freed = refused.compactMap(\.draft.idempotency)
        if !freed.isEmpty { await release(freed, context: context) }
        return within
    }

    private func appLimitError(_ refusal: QuotaRefusal) -> APIError {
        let message =
            switch refusal.limit {
            case .liveBytes?:
                "app '\(app)' may hold \(appLimits.payloadBytes) payload bytes within the retention (limits.payloadBytes); retry in \(refusal.retryAfter) s"
            default:
                "app '\(app)' may create \(appLimits.notificationsPerMinute) notifications a minute (limits.notificationsPerMinute); retry in \(refusal.retryAfter) s"
            }
        let code = refusal.limit == .liveBytes ? "app_limit_payload_bytes" : "app_limit_rate"
        return APIError(.tooManyRequests, code: code, message: message, headers: [.retryAfter: "\(refusal.retryAfter)"])
    }

    /// How many installations `target` addresses, counted until past `limit` (a worker's
    /// resolution: the candidate tags' sets, then the expression on each one's tags).
    private func audience(of target: String, beyond limit: Int) async throws -> Int {
        let expression: TagExpression
        do {
            expression = try TagExpression(parsing: target)
        } catch {
            throw APIError.unprocessable("bad target: \(error.message)", code: "bad_target")
        }
        let sources: [String?] = expression.candidateTags.map { $0.sorted().map(Optional.some) } ?? [nil]
        var seen = Set<String>()
        var count = 0
        for page in try await installations.installationIDs(tags: sources, pageSize: 1000) {
            let fresh = page.filter { seen.insert($0).inserted }
            for start in stride(from: 0, to: fresh.count, by: 1000) {
                let chunk = Array(fresh[start..<min(start + 1000, fresh.count)])
                count += try await installations.installations(ids: chunk).filter { expression.matches(Set($0.tags)) }.count
                if count > limit { return count }
            }
        }
        return count
    }
}
