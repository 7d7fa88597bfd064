import RichPushCore
import RichPushTemplates

/// A dry run of a template send (`properties`): the templated devices grouped by what they would
/// get (template, device locale, platform), each group's payload rendered once as a worker
/// renders it, or its per-device failure (`template_missing_property`, `payload_too_large`).
extension NotificationRoutes {
    /// Groups rendered at most; the others are counted in `templatesLeftOut`.
    static let dryRunTemplateGroups = 20

    struct TemplatePreview: Encodable {
        var template: String
        var platform: String
        /// The devices' registered locale (nil: none) and the one the chain chose for them.
        var deviceLocale: String?
        var locale: String?
        var devices: Int
        var bytes: Int?
        var limit: Int
        var payload: String?
        /// Why these devices would fail, with the reason's code first.
        var error: String?
    }

    struct TemplateGroup: Hashable {
        let template: InstallationTemplate
        let locale: String?
        let platform: Platform
    }

    /// The previews of the largest groups, and how many groups were left out.
    static func templatePreviews(
        _ groups: [TemplateGroup: Int], properties: SendProperties, builtIns: [String: String]
    ) -> ([TemplatePreview], Int) {
        let sorted = groups.sorted {
            $0.value != $1.value
                ? $0.value > $1.value : "\($0.key.template.name)\($0.key.locale ?? "")" < "\($1.key.template.name)\($1.key.locale ?? "")"
        }
        let previews = sorted.prefix(dryRunTemplateGroups).map { group, devices in
            preview(group, devices: devices, properties: properties, builtIns: builtIns)
        }
        return (previews, max(0, sorted.count - dryRunTemplateGroups))
    }

    private static func preview(
        _ group: TemplateGroup, devices: Int, properties: SendProperties, builtIns: [String: String]
    ) -> TemplatePreview {
        let format = TemplateHeaders.format(of: group.platform)
        let (values, chosen) = properties.values(for: group.locale)
        var preview = TemplatePreview(
            template: group.template.name, platform: group.platform.rawValue, deviceLocale: group.locale, locale: chosen,
            devices: devices, limit: format.maxTemplateBytes)
        var merged = values
        for (name, value) in builtIns {
            merged = merged.filter { $0.key.lowercased() != name.lowercased() }
            merged[name] = value
        }
        do {
            let template = try Template(group.template.body)
            let policy: MissingPropertyPolicy =
                switch group.template.missing {
                case .fail: .fail
                case .empty: .empty
                case .fallback: .fallback(try TemplateProperties(group.template.defaults))
                }
            let bytes = try template.render(try TemplateProperties(merged), missing: policy).bytes
            preview.bytes = bytes.count
            preview.payload = String(decoding: bytes, as: UTF8.self)
            if bytes.count > format.maxTemplateBytes {
                preview.error =
                    "payload_too_large: template '\(group.template.name)' rendered \(bytes.count) bytes; \(format.rawValue) accepts at most \(format.maxTemplateBytes)"
            }
        } catch let error as TemplateRenderError {
            preview.error = "\(error.code): template '\(group.template.name)': \(error.message)"
        } catch {
            preview.error = "invalid_template: template '\(group.template.name)': \(error)"
        }
        return preview
    }
}
