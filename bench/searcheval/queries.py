"""The judged queries: (query, relevant paths, shape). Any relevant path counts as the answer;
near-duplicate pages in the version folders are all relevant for their query.

Shapes: `command` (a page named like a command), `natural` (words of the task, not of the
name), `question` (a question as people type it), `common` (terms in most documents),
`duplicate` (the answer competes with near-duplicate pages), `alias`, `heading`, `phrase`.
"""

from __future__ import annotations

from .corpus import NEW_IN_LAST, VERSIONS


def ref(module: str, name: str) -> tuple[str, ...]:
    return (f"reference/{module}/{name}.md",)


def kv(name: str) -> tuple[str, ...]:
    versions = VERSIONS[-1:] if name in NEW_IN_LAST else VERSIONS
    return tuple(f"reference/{v}/Az.KeyVault/{name}.md" for v in versions)


def helppage(title: str) -> tuple[str, ...]:
    return (f"help/{title}.md",)


QUERIES: list[tuple[str, tuple[str, ...], str]] = [
    ("create virtual machine", ref("Az.Compute", "New-AzVM"), "natural"),
    ("get key vault secret", kv("Get-AzKeyVaultSecret"), "natural"),
    ("connect azure account", ref("Az.Accounts", "Connect-AzAccount"), "natural"),
    ("New-AzVM", ref("Az.Compute", "New-AzVM"), "command"),
    ("Get-AzKeyVaultSecret", kv("Get-AzKeyVaultSecret"), "command"),
    ("Connect-AzAccount", ref("Az.Accounts", "Connect-AzAccount"), "command"),
    ("Remove-AzResourceGroup", ref("Az.Resources", "Remove-AzResourceGroup"), "command"),
    (
        "resource group",
        ref("Az.Resources", "New-AzResourceGroup")
        + ref("Az.Resources", "Get-AzResourceGroup")
        + ref("Az.Resources", "Remove-AzResourceGroup"),
        "common",
    ),
    ("create resource group", ref("Az.Resources", "New-AzResourceGroup"), "common"),
    ("delete a resource group", ref("Az.Resources", "Remove-AzResourceGroup"), "common"),
    ("deploy template to resource group", ref("Az.Resources", "New-AzResourceGroupDeployment"), "common"),
    ("upload file to blob", ref("Az.Storage", "Set-AzStorageBlobContent"), "natural"),
    ("download a storage blob", ref("Az.Storage", "Get-AzStorageBlobContent"), "natural"),
    ("storage account access keys", ref("Az.Storage", "Get-AzStorageAccountKey"), "natural"),
    ("firewall rule for sql server", ref("Az.Sql", "New-AzSqlServerFirewallRule"), "natural"),
    ("set subscription for the current session", ref("Az.Accounts", "Set-AzContext"), "natural"),
    ("disconnect azure account", ref("Az.Accounts", "Disconnect-AzAccount"), "natural"),
    ("assign role to a user", ref("Az.Resources", "New-AzRoleAssignment"), "natural"),
    ("restart web app", ref("Az.Websites", "Restart-AzWebApp"), "natural"),
    ("deploy web app from zip file", ref("Az.Websites", "Publish-AzWebApp"), "natural"),
    ("add network security rule", ref("Az.Network", "Add-AzNetworkSecurityRuleConfig"), "natural"),
    ("create public ip address", ref("Az.Network", "New-AzPublicIpAddress"), "natural"),
    ("stop vm", ref("Az.Compute", "Stop-AzVM"), "command"),
    ("metric alert rule", ref("Az.Monitor", "Add-AzMetricAlertRuleV2"), "natural"),
    ("move resource to another subscription", ref("Az.Resources", "Move-AzResource"), "natural"),
    ("lock a resource to prevent deletion", ref("Az.Resources", "New-AzResourceLock"), "natural"),
    ("how do I create a sql database", ref("Az.Sql", "New-AzSqlDatabase"), "question"),
    ("recover deleted secret", kv("Undo-AzKeyVaultSecretRemoval"), "duplicate"),
    ("backup a secret to a file", kv("Backup-AzKeyVaultSecret"), "duplicate"),
    ("key vault access policy permissions", kv("Set-AzKeyVaultAccessPolicy"), "duplicate"),
    ("create a key vault", kv("New-AzKeyVault"), "duplicate"),
    ("delete secret", kv("Remove-AzKeyVaultSecret"), "duplicate"),
    ("how do I link to a specific heading", helppage("Internal links"), "question"),
    ("math formulas with LaTeX", helppage("Advanced formatting syntax"), "question"),
    ("how to embed an image in a note", helppage("Embed files"), "question"),
    ("what are callouts", helppage("Callouts"), "question"),
    ("nested tags", helppage("Tags"), "heading"),
    ("how can I give a note another name", helppage("Aliases"), "question"),
    ("yaml properties at the top of the file", helppage("Properties"), "natural"),
    ("insert a template into my note", helppage("Templates"), "question"),
    ("open today's daily note", helppage("Daily notes"), "heading"),
    ("keyboard shortcuts", helppage("Hotkeys"), "natural"),
    ("sync notes between phone and computer", helppage("Sync your notes across devices"), "natural"),
    ("how do I add footnotes", helppage("Basic formatting syntax"), "question"),
    ("mermaid diagram", helppage("Advanced formatting syntax"), "natural"),
    ("search operators for the file path", helppage("Search"), "natural"),
    ("which notes link to the current note", helppage("Backlinks"), "question"),
    ("change the look of the app with css", helppage("CSS snippets"), "natural"),
    ("import notes from notion", helppage("Import from Notion"), "natural"),
    ("password rotation", ("team/runbooks/Rotate database credentials.md",), "alias"),
    ("new starter guide", ("team/handbook/Onboarding.md",), "alias"),
    ("incident severity levels", ("team/handbook/On-call handbook.md",), "heading"),
    ("release checklist", ("team/handbook/Release process.md",), "phrase"),
    ("deploy to production", ("team/runbooks/Deploy to production.md",), "common"),
    ("laptop setup", ("team/handbook/Onboarding.md",), "heading"),
]
