import Foundation
import TrendyModels

/// A link into the app (docs/launch.md): `trendy://events/<id>` (the events page at that
/// event), `trendy://events`, `trendy://dashboard`, `trendy://calendar`, `trendy://analytics`
/// (a tab), `trendy://log/<type>` (log an event of that type now). Links that show an account's
/// data wait until the person is signed in and onboarded.
enum DeepLink: Sendable, Equatable, CustomStringConvertible {
    case event(UUIDv7)
    case tab(MainTab)
    case log(typeName: String)

    /// The link `text` names, or nil when it is not one of ours.
    init?(_ text: String) {
        guard let url = URLComponents(string: text), url.scheme == "trendy", let host = url.host else { return nil }
        let parts = url.path.split(separator: "/").map { String($0).removingPercentEncoding ?? String($0) }
        switch (host, parts.count) {
        case ("events", 1):
            guard let id = UUIDv7(parts[0]) else { return nil }
            self = .event(id)
        case ("log", 1):
            let name = parts[0].trimmingCharacters(in: .whitespaces)
            guard !name.isEmpty, name.count <= 200 else { return nil }
            self = .log(typeName: name)
        case (let tab, 0):
            guard let tab = MainTab(rawValue: tab) else { return nil }
            self = .tab(tab)
        default: return nil
        }
    }

    var description: String {
        switch self {
        case .event(let id): "trendy://events/\(id)"
        case .tab(let tab): "trendy://\(tab.rawValue)"
        case .log(let name):
            "trendy://log/\(name.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed) ?? name)"
        }
    }
}
