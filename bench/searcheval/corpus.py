"""The evaluation corpus: three kinds of pages that real vaults mix, written out deterministically.

- `reference/`: PowerShell module reference pages (platyPS layout: frontmatter, SYNOPSIS,
  SYNTAX, DESCRIPTION, EXAMPLES, PARAMETERS). Their names are commands (`New-AzVM`), and
  "resource group", "Azure", "specifies" and "parameter" are in most of them, as in the real
  Az docs. Az.KeyVault ships in three version folders: near-duplicate pages.
- `help/`: a help-style vault (how-to pages people ask questions about).
- `team/`: runbooks and handbooks with aliases, headings and phrases; `meetings/`: filler
  notes full of the same common words.

Every page is written from the tables below (no randomness but a seeded generator for the
filler), so the judged answers in `queries.py` stay valid.
"""

from __future__ import annotations

import random
from pathlib import Path

# (module, command, synopsis, description, [(parameter, description)], example)
CMDLETS: list[tuple[str, str, str, str, list[tuple[str, str]], str]] = [
    (
        "Az.Compute",
        "New-AzVM",
        "Creates a virtual machine.",
        "The New-AzVM cmdlet creates a virtual machine in Azure. This cmdlet takes a virtual machine object as input. "
        "Use the New-AzVMConfig cmdlet to create a virtual machine object. Other cmdlets can be used to configure the "
        "virtual machine, such as Set-AzVMOperatingSystem, Set-AzVMSourceImage, Add-AzVMNetworkInterface and "
        "Set-AzVMOSDisk. The simplified parameter set creates the virtual network, subnet and public IP address for you.",
        [
            ("Image", "The friendly image name upon which the VM will be built."),
            ("Size", "The virtual machine size, for example Standard_D2s_v3."),
            ("Credential", "The administrator credentials for the VM."),
        ],
        'New-AzVM -ResourceGroupName "MyRG" -Name "MyVM" -Location "eastus" -Image "Ubuntu2204"',
    ),
    (
        "Az.Compute",
        "Get-AzVM",
        "Gets the properties of a virtual machine.",
        "The Get-AzVM cmdlet gets the model view and instance view of an Azure virtual machine. The model view is the "
        "user specified properties of the virtual machine. The instance view is the instance level status.",
        [("Status", "Indicates that this cmdlet gets only the instance view of the virtual machine.")],
        'Get-AzVM -ResourceGroupName "MyRG" -Name "MyVM" -Status',
    ),
    (
        "Az.Compute",
        "Remove-AzVM",
        "Deletes a virtual machine.",
        "The Remove-AzVM cmdlet deletes a virtual machine from Azure. This cmdlet does not delete the disks or network "
        "interfaces that the virtual machine used unless they were created with the delete option.",
        [("Force", "Forces the command to run without asking for user confirmation.")],
        'Remove-AzVM -ResourceGroupName "MyRG" -Name "MyVM"',
    ),
    (
        "Az.Compute",
        "Start-AzVM",
        "Starts an Azure virtual machine.",
        "The Start-AzVM cmdlet starts an Azure virtual machine that is deallocated or stopped.",
        [("NoWait", "Starts the operation and returns immediately, before the operation is completed.")],
        'Start-AzVM -ResourceGroupName "MyRG" -Name "MyVM"',
    ),
    (
        "Az.Compute",
        "Stop-AzVM",
        "Stops an Azure virtual machine.",
        "The Stop-AzVM cmdlet stops an Azure virtual machine and deallocates its compute resources so that billing "
        "stops. Use StayProvisioned to stop the operating system but keep the allocation.",
        [
            ("StayProvisioned", "Indicates that the VM stays provisioned; you keep paying for the compute."),
            ("Force", "Forces the command to run without asking for user confirmation."),
        ],
        'Stop-AzVM -ResourceGroupName "MyRG" -Name "MyVM"',
    ),
    (
        "Az.Compute",
        "Restart-AzVM",
        "Restarts an Azure virtual machine.",
        "The Restart-AzVM cmdlet restarts an Azure virtual machine.",
        [],
        'Restart-AzVM -ResourceGroupName "MyRG" -Name "MyVM"',
    ),
    (
        "Az.Compute",
        "Update-AzVM",
        "Updates the state of an Azure virtual machine.",
        "The Update-AzVM cmdlet updates the state of an Azure virtual machine to the state of a virtual machine "
        "object, for example after you changed its size or tags.",
        [("VM", "Specifies a local virtual machine object to apply.")],
        'Update-AzVM -ResourceGroupName "MyRG" -VM $vm',
    ),
    (
        "Az.Compute",
        "New-AzVMConfig",
        "Creates a configurable virtual machine object.",
        "The New-AzVMConfig cmdlet creates a configurable local virtual machine object for Azure. Set other properties "
        "by using the following cmdlets before you pass it to New-AzVM.",
        [("VMSize", "Specifies the size for the virtual machine.")],
        'New-AzVMConfig -VMName "MyVM" -VMSize "Standard_B2s"',
    ),
    (
        "Az.Compute",
        "Set-AzVMOSDisk",
        "Sets the operating system disk properties on a virtual machine.",
        "The Set-AzVMOSDisk cmdlet sets the operating system disk properties on a local virtual machine object.",
        [("Caching", "Specifies the caching mode of the operating system disk.")],
        "Set-AzVMOSDisk -VM $vm -CreateOption FromImage",
    ),
    (
        "Az.Compute",
        "New-AzDisk",
        "Creates a managed disk.",
        "The New-AzDisk cmdlet creates a managed disk from a disk configuration object.",
        [("Disk", "Specifies a local disk object.")],
        'New-AzDisk -ResourceGroupName "MyRG" -DiskName "data1" -Disk $cfg',
    ),
    (
        "Az.Compute",
        "New-AzSnapshot",
        "Creates a snapshot.",
        "The New-AzSnapshot cmdlet creates a point-in-time snapshot of a managed disk.",
        [("Snapshot", "Specifies a local snapshot object.")],
        'New-AzSnapshot -ResourceGroupName "MyRG" -SnapshotName "snap1" -Snapshot $cfg',
    ),
    (
        "Az.Accounts",
        "Connect-AzAccount",
        "Connect to Azure with an authenticated account for use with cmdlets from the Az PowerShell modules.",
        "The Connect-AzAccount cmdlet connects to Azure with an authenticated account for use with cmdlets from the Az "
        "PowerShell modules. You can use this authenticated account only with Azure Resource Manager requests. To sign "
        "in interactively, run Connect-AzAccount without parameters; a device code flow is used where no browser exists.",
        [
            ("Tenant", "Optional tenant name or ID."),
            ("UseDeviceAuthentication", "Use device code authentication instead of a browser control."),
            ("Identity", "Login using a managed service identity."),
        ],
        "Connect-AzAccount -Tenant 'xxxx-xxxx'",
    ),
    (
        "Az.Accounts",
        "Disconnect-AzAccount",
        "Disconnects a connected Azure account and removes all credentials and contexts associated with that account.",
        "The Disconnect-AzAccount cmdlet disconnects a connected Azure account and removes all credentials and contexts "
        "(subscription and tenant information) associated with that account.",
        [],
        "Disconnect-AzAccount",
    ),
    (
        "Az.Accounts",
        "Get-AzContext",
        "Gets the metadata used to authenticate Azure Resource Manager requests.",
        "The Get-AzContext cmdlet gets the current metadata used to authenticate Azure Resource Manager requests. This "
        "cmdlet gets the Active Directory account, Active Directory tenant, Azure subscription, and the targeted Azure "
        "environment.",
        [("ListAvailable", "List all available contexts in the current session.")],
        "Get-AzContext",
    ),
    (
        "Az.Accounts",
        "Set-AzContext",
        "Sets the tenant, subscription, and environment for cmdlets to use in the current session.",
        "The Set-AzContext cmdlet sets authentication information for cmdlets that you run in the current session. The "
        "context includes tenant, subscription, and environment information.",
        [("Subscription", "The name or ID of the subscription that the context is set to.")],
        "Set-AzContext -Subscription 'Contoso Production'",
    ),
    (
        "Az.Accounts",
        "Get-AzSubscription",
        "Get subscriptions that the current account can access.",
        "The Get-AzSubscription cmdlet gets the subscription ID, subscription name, and home tenant for subscriptions "
        "that the current account can access.",
        [("TenantId", "Specifies the ID of the tenant that contains subscriptions.")],
        "Get-AzSubscription",
    ),
    (
        "Az.Resources",
        "New-AzResourceGroup",
        "Creates an Azure resource group.",
        "The New-AzResourceGroup cmdlet creates an Azure resource group. A resource group is a container that holds "
        "related resources for an Azure solution. You can create a resource group with just a name and location.",
        [
            ("Location", "Specifies the location of the resource group."),
            ("Tag", "Key-value pairs in the form of a hash table."),
        ],
        'New-AzResourceGroup -Name "RG01" -Location "South Central US"',
    ),
    (
        "Az.Resources",
        "Get-AzResourceGroup",
        "Gets resource groups.",
        "The Get-AzResourceGroup cmdlet gets Azure resource groups in the current subscription. You can get all resource "
        "groups, or specify a resource group by name or by other properties.",
        [("Location", "Specifies the location.")],
        "Get-AzResourceGroup",
    ),
    (
        "Az.Resources",
        "Remove-AzResourceGroup",
        "Removes a resource group.",
        "The Remove-AzResourceGroup cmdlet removes an Azure resource group and all of its resources from the current "
        "subscription. To delete a resource but leave the resource group, use the Remove-AzResource cmdlet.",
        [("Force", "Forces the command to run without asking for user confirmation.")],
        'Remove-AzResourceGroup -Name "ContosoRG01"',
    ),
    (
        "Az.Resources",
        "Get-AzResource",
        "Gets resources.",
        "The Get-AzResource cmdlet gets Azure resources.",
        [("ResourceType", "The resource type of the resources to get.")],
        "Get-AzResource -ResourceType Microsoft.Compute/virtualMachines",
    ),
    (
        "Az.Resources",
        "Move-AzResource",
        "Moves a resource to a different resource group or subscription.",
        "The Move-AzResource cmdlet moves existing resources to a different resource group. That resource group can be "
        "in a different subscription.",
        [("DestinationSubscriptionId", "Specifies the ID of the target subscription.")],
        'Move-AzResource -DestinationResourceGroupName "RG2" -ResourceId $ids',
    ),
    (
        "Az.Resources",
        "New-AzRoleAssignment",
        "Assigns the specified RBAC role to the specified principal, at the specified scope.",
        "Use the New-AzRoleAssignment command to grant access. Access is granted by assigning the appropriate RBAC role "
        "to a user, group, application or service principal at the right scope.",
        [
            ("SignInName", "The email address or the user principal name of the user."),
            ("RoleDefinitionName", "Name of the RBAC role, for example Reader."),
        ],
        "New-AzRoleAssignment -SignInName john@contoso.com -RoleDefinitionName Reader -ResourceGroupName rg1",
    ),
    (
        "Az.Resources",
        "New-AzResourceLock",
        "Creates a resource lock.",
        "The New-AzResourceLock cmdlet creates a lock on a resource. A CanNotDelete lock prevents deletion of the "
        "resource; a ReadOnly lock prevents changes as well.",
        [("LockLevel", "The level of the lock: CanNotDelete or ReadOnly.")],
        "New-AzResourceLock -LockLevel CanNotDelete -LockName lock1 -ResourceName res1",
    ),
    (
        "Az.Resources",
        "New-AzResourceGroupDeployment",
        "Adds an Azure deployment to a resource group.",
        "The New-AzResourceGroupDeployment cmdlet adds a deployment to an existing resource group. This includes the "
        "resources that the deployment requires. Use an ARM template or a Bicep file.",
        [("TemplateFile", "Specifies the full path of a local template file.")],
        'New-AzResourceGroupDeployment -ResourceGroupName "RG1" -TemplateFile main.bicep',
    ),
    (
        "Az.Storage",
        "New-AzStorageAccount",
        "Creates a Storage account.",
        "The New-AzStorageAccount cmdlet creates an Azure Storage account.",
        [("SkuName", "Specifies the SKU name of the Storage account.")],
        'New-AzStorageAccount -ResourceGroupName "MyRG" -Name "mystorage01" -Location "westus" -SkuName Standard_LRS',
    ),
    (
        "Az.Storage",
        "Get-AzStorageAccountKey",
        "Gets the access keys for an Azure Storage account.",
        "The Get-AzStorageAccountKey cmdlet gets the access keys for an Azure Storage account.",
        [("ListKerbKey", "Lists the Kerberos keys as well.")],
        'Get-AzStorageAccountKey -ResourceGroupName "RG01" -Name "mystorageaccount"',
    ),
    (
        "Az.Storage",
        "New-AzStorageContainer",
        "Creates an Azure storage container.",
        "The New-AzStorageContainer cmdlet creates an Azure storage container.",
        [("Permission", "Specifies the level of public access to this container.")],
        'New-AzStorageContainer -Name "container01" -Context $ctx',
    ),
    (
        "Az.Storage",
        "Set-AzStorageBlobContent",
        "Uploads a local file to an Azure Storage blob.",
        "The Set-AzStorageBlobContent cmdlet uploads a local file to an Azure Storage blob.",
        [
            ("File", "Specifies a local file path for a file to upload as blob content."),
            ("Container", "Specifies the name of a container."),
        ],
        'Set-AzStorageBlobContent -Container "ContosoUpload" -File ".\\PlanningData" -Blob "Planning2015"',
    ),
    (
        "Az.Storage",
        "Get-AzStorageBlobContent",
        "Downloads a storage blob.",
        "The Get-AzStorageBlobContent cmdlet downloads the specified storage blob to a local destination.",
        [("Destination", "Specifies the location to store the downloaded file.")],
        'Get-AzStorageBlobContent -Container "containername" -Blob "blob" -Destination "C:\\test\\"',
    ),
    (
        "Az.Network",
        "New-AzVirtualNetwork",
        "Creates a virtual network.",
        "The New-AzVirtualNetwork cmdlet creates an Azure virtual network.",
        [("AddressPrefix", "Specifies a range of IP addresses for a virtual network.")],
        'New-AzVirtualNetwork -Name MyVNet -ResourceGroupName TestRG -Location centralus -AddressPrefix "10.0.0.0/16"',
    ),
    (
        "Az.Network",
        "New-AzNetworkSecurityGroup",
        "Creates a network security group.",
        "The New-AzNetworkSecurityGroup cmdlet creates an Azure network security group.",
        [("SecurityRules", "Specifies a list of network security rule objects to create in a network security group.")],
        "New-AzNetworkSecurityGroup -Name nsg1 -ResourceGroupName rg1 -Location westus",
    ),
    (
        "Az.Network",
        "Add-AzNetworkSecurityRuleConfig",
        "Adds a network security rule configuration to a network security group.",
        "The Add-AzNetworkSecurityRuleConfig cmdlet adds a network security rule configuration to an Azure network "
        "security group, for example to allow inbound RDP on port 3389.",
        [
            ("Access", "Specifies whether network traffic is allowed or denied."),
            ("DestinationPortRange", "Specifies a destination port or range."),
        ],
        "Add-AzNetworkSecurityRuleConfig -Name rdp-rule -NetworkSecurityGroup $nsg -Access Allow -Protocol Tcp -Direction Inbound",
    ),
    (
        "Az.Network",
        "New-AzPublicIpAddress",
        "Creates a public IP address.",
        "The New-AzPublicIpAddress cmdlet creates a public IP address.",
        [("AllocationMethod", "Specifies the method with which to allocate the public IP address.")],
        "New-AzPublicIpAddress -Name $publicIpName -ResourceGroupName $rgName -AllocationMethod Static -Location $location",
    ),
    (
        "Az.Network",
        "New-AzLoadBalancer",
        "Creates a load balancer.",
        "The New-AzLoadBalancer cmdlet creates an Azure load balancer.",
        [("FrontendIpConfiguration", "Specifies a list of front-end IP addresses.")],
        'New-AzLoadBalancer -ResourceGroupName "MyResourceGroup" -Name "MyLoadBalancer" -Location "West US"',
    ),
    (
        "Az.Websites",
        "New-AzWebApp",
        "Creates an Azure Web App.",
        "The New-AzWebApp cmdlet creates an Azure Web App in a given resource group that uses the specified App "
        "Service plan and data center.",
        [("AppServicePlan", "App Service plan name.")],
        'New-AzWebApp -ResourceGroupName Default-Web-WestUS -Name "ContosoWebApp" -Location "West US" -AppServicePlan "ContosoServicePlan"',
    ),
    (
        "Az.Websites",
        "Restart-AzWebApp",
        "Restarts an Azure Web App.",
        "The Restart-AzWebApp cmdlet stops and then starts an Azure Web App.",
        [],
        'Restart-AzWebApp -ResourceGroupName "Default-Web-WestUS" -Name "ContosoSite"',
    ),
    (
        "Az.Websites",
        "Publish-AzWebApp",
        "Deploys an Azure Web App from a ZIP, JAR, or WAR file using zipdeploy.",
        "The Publish-AzWebApp cmdlet uploads the contents of a ZIP, WAR, or JAR file to an Azure Web App using "
        "zipdeploy and deploys it.",
        [("ArchivePath", "The path of the archive file. ZIP, WAR, and JAR are supported.")],
        "Publish-AzWebApp -ResourceGroupName Default-Web-WestUS -Name MyApp -ArchivePath C:\\project\\app.zip",
    ),
    (
        "Az.Websites",
        "New-AzAppServicePlan",
        "Creates an App Service plan in Azure.",
        "The New-AzAppServicePlan cmdlet creates an Azure App Service plan in a given location with the specified tier, "
        "worker size and number of workers.",
        [("Tier", "The pricing tier: Free, Shared, Basic, Standard or Premium.")],
        'New-AzAppServicePlan -ResourceGroupName "Default-Web-WestUS" -Name "ContosoASP" -Location "West US" -Tier "Basic"',
    ),
    (
        "Az.Sql",
        "New-AzSqlDatabase",
        "Creates a database or an elastic database.",
        "The New-AzSqlDatabase cmdlet creates an Azure SQL database. You can also create an elastic database by setting "
        "the ElasticPoolName parameter to an existing elastic pool.",
        [
            ("DatabaseName", "Specifies the name of the database."),
            ("ServerName", "Specifies the name of the server that hosts the database."),
        ],
        'New-AzSqlDatabase -ResourceGroupName "ResourceGroup01" -ServerName "Server01" -DatabaseName "Database01"',
    ),
    (
        "Az.Sql",
        "New-AzSqlServer",
        "Creates a SQL Database server.",
        "The New-AzSqlServer cmdlet creates an Azure SQL Database server.",
        [("SqlAdministratorCredentials", "Specifies the SQL Database server administrator credentials.")],
        'New-AzSqlServer -ResourceGroupName "ResourceGroup01" -Location "Central US" -ServerName "server01"',
    ),
    (
        "Az.Sql",
        "New-AzSqlServerFirewallRule",
        "Creates a firewall rule for a SQL Database server.",
        "The New-AzSqlServerFirewallRule cmdlet creates a firewall rule for the specified SQL Database server. Clients "
        "whose IP address is in the range can connect.",
        [("StartIpAddress", "Specifies the start value of the IP address range.")],
        'New-AzSqlServerFirewallRule -ResourceGroupName "ResourceGroup01" -ServerName "Server01" -FirewallRuleName "Rule01" '
        '-StartIpAddress "192.168.0.198" -EndIpAddress "192.168.0.199"',
    ),
    (
        "Az.Sql",
        "Remove-AzSqlDatabase",
        "Removes an Azure SQL database.",
        "The Remove-AzSqlDatabase cmdlet removes an Azure SQL database.",
        [("Force", "Forces the command to run without asking for user confirmation.")],
        'Remove-AzSqlDatabase -ResourceGroupName "ResourceGroup01" -ServerName "Server01" -DatabaseName "Database01"',
    ),
    (
        "Az.Monitor",
        "Get-AzLog",
        "Gets a log of events.",
        "The Get-AzLog cmdlet gets a log of events: the activity log of operations performed on resources in your "
        "subscription.",
        [("StartTime", "Specifies the start time of the query in local time.")],
        "Get-AzLog -StartTime 2026-03-01T10:30",
    ),
    (
        "Az.Monitor",
        "Add-AzMetricAlertRuleV2",
        "Adds or updates a V2 (non-classic) metric-based alert rule.",
        "The Add-AzMetricAlertRuleV2 cmdlet adds or updates a V2 (non-classic) metric-based alert rule. The added rule is "
        "associated with a resource group and has a name.",
        [("Condition", "Specifies the conditions for the rule.")],
        "Add-AzMetricAlertRuleV2 -Name test -ResourceGroupName test -WindowSize 0:5 -Frequency 0:5 -TargetResourceId $id -Condition $c",
    ),
    (
        "Az.Monitor",
        "Get-AzMetric",
        "Gets the metric values of a resource.",
        "The Get-AzMetric cmdlet gets the metric values for a specified resource.",
        [("MetricName", "Specifies an array of names of metrics.")],
        'Get-AzMetric -ResourceId $id -MetricName "CpuTime" -TimeGrain 00:01:00',
    ),
]

# Az.KeyVault: in three version folders (near-duplicate pages); the last two only in the newest
KEYVAULT: list[tuple[str, str, str, list[tuple[str, str]], str]] = [
    (
        "Get-AzKeyVaultSecret",
        "Gets the secrets in a key vault.",
        "The Get-AzKeyVaultSecret cmdlet gets secrets in a key vault. This cmdlet gets a specific secret or all the "
        "secrets in a key vault. Use AsPlainText to read the value of a secret.",
        [
            ("VaultName", "Specifies the name of the key vault to which the secret belongs."),
            ("AsPlainText", "Returns the secret value as plain text."),
        ],
        "Get-AzKeyVaultSecret -VaultName 'Contoso' -Name 'ITSecret' -AsPlainText",
    ),
    (
        "Set-AzKeyVaultSecret",
        "Creates or updates a secret in a key vault.",
        "The Set-AzKeyVaultSecret cmdlet creates or updates a secret in a key vault. If the secret does not exist, this "
        "cmdlet creates it. If the secret already exists, this cmdlet creates a new version of that secret.",
        [("SecretValue", "Specifies the value for the secret as a SecureString object.")],
        "Set-AzKeyVaultSecret -VaultName 'Contoso' -Name 'ITSecret' -SecretValue $secret",
    ),
    (
        "Remove-AzKeyVaultSecret",
        "Deletes a secret in a key vault.",
        "The Remove-AzKeyVaultSecret cmdlet deletes a secret in a key vault. If the secret was deleted accidentally "
        "the secret can be recovered using Undo-AzKeyVaultSecretRemoval while soft delete retains it.",
        [("InRemovedState", "Permanently removes the previously deleted secret.")],
        "Remove-AzKeyVaultSecret -VaultName 'Contoso' -Name 'FinanceSecret'",
    ),
    (
        "New-AzKeyVault",
        "Creates a key vault.",
        "The New-AzKeyVault cmdlet creates a key vault in the specified resource group. This cmdlet also grants "
        "permissions to the currently logged on user to add, remove, or list keys and secrets in the key vault.",
        [("Sku", "Specifies the SKU of the key vault instance.")],
        "New-AzKeyVault -VaultName 'Contoso03Vault' -ResourceGroupName 'Group14' -Location 'East US'",
    ),
    (
        "Get-AzKeyVaultKey",
        "Gets Key Vault keys.",
        "The Get-AzKeyVaultKey cmdlet gets Azure Key Vault keys. This cmdlet gets a specific key or all the keys in a "
        "key vault.",
        [("VaultName", "Specifies the name of the key vault from which this cmdlet gets keys.")],
        "Get-AzKeyVaultKey -VaultName 'contoso'",
    ),
    (
        "Set-AzKeyVaultAccessPolicy",
        "Grants or modifies existing permissions for a user, application, or security group to perform operations with a key vault.",
        "The Set-AzKeyVaultAccessPolicy cmdlet grants or modifies existing permissions for a user, application, or "
        "security group to perform the specified operations with a key vault. It does not modify the permissions that "
        "other users, applications, or security groups have on the key vault.",
        [("PermissionsToSecrets", "Specifies an array of secret operation permissions to grant.")],
        "Set-AzKeyVaultAccessPolicy -VaultName 'Contoso03Vault' -UserPrincipalName 'PattiFuller@contoso.com' -PermissionsToSecrets set,delete",
    ),
    (
        "Undo-AzKeyVaultSecretRemoval",
        "Recovers a deleted secret in a key vault into an active state.",
        "The Undo-AzKeyVaultSecretRemoval cmdlet will recover a previously deleted secret. The recovered secret will be "
        "active and can be used for all secret operations. Caller needs to have 'recover' permission.",
        [("Name", "Secret name. Cmdlet constructs the FQDN of a secret from vault name.")],
        "Undo-AzKeyVaultSecretRemoval -VaultName 'MyKeyVault' -Name 'MySecret'",
    ),
    (
        "Backup-AzKeyVaultSecret",
        "Backs up a secret in a key vault.",
        "The Backup-AzKeyVaultSecret cmdlet backs up a specified secret in a key vault by downloading it and storing it "
        "in a file. If there are multiple versions of the secret, all versions are included in the backup.",
        [("OutputFile", "Specifies the output file in which the backup blob is stored.")],
        "Backup-AzKeyVaultSecret -VaultName 'MyKeyVault' -Name 'MySecret' -OutputFile 'C:\\Backup.blob'",
    ),
]
VERSIONS = ("azps-10.4.0", "azps-11.6.0", "azps-12.5.0")
NEW_IN_LAST = {"Undo-AzKeyVaultSecretRemoval", "Backup-AzKeyVaultSecret"}

COMMON_PARAMS = [
    (
        "ResourceGroupName",
        "Specifies the name of the resource group. The resource group must exist in the current subscription.",
    ),
    ("Name", "Specifies the name of the resource."),
    ("DefaultProfile", "The credentials, account, tenant, and subscription used for communication with Azure."),
]


def _cmdlet_page(
    module: str,
    name: str,
    synopsis: str,
    description: str,
    params: list[tuple[str, str]],
    example: str,
    version: str = "latest",
    accounts: bool = False,
) -> str:
    all_params = params + ([p for p in COMMON_PARAMS if p[0] == "DefaultProfile"] if accounts else COMMON_PARAMS)
    syntax = " ".join(f"[-{p} <String>]" for p, _ in all_params)
    out = [
        "---",
        f"external help file: Microsoft.Azure.PowerShell.Cmdlets.{module.split('.')[1]}.dll-Help.xml",
        f"Module Name: {module}",
        f"online version: https://learn.example.com/powershell/module/{module.lower()}/{name.lower()}?view={version}",
        "schema: 2.0.0",
        "---",
        "",
        f"# {name}",
        "",
        "## SYNOPSIS",
        synopsis,
        "",
        "## SYNTAX",
        "",
        "```",
        f"{name} {syntax} [<CommonParameters>]",
        "```",
        "",
        "## DESCRIPTION",
        description,
        "",
        "## EXAMPLES",
        "",
        "### Example 1",
        "```powershell",
        example,
        "```",
        "",
        "## PARAMETERS",
        "",
    ]
    for p, d in all_params:
        out += [f"### -{p}", d, "", "```yaml", "Type: System.String", "Required: False", "```", ""]
    out += [
        "### CommonParameters",
        "This cmdlet supports the common parameters: -Debug, -ErrorAction, -ErrorVariable, -InformationAction, "
        "-OutBuffer, -OutVariable, -PipelineVariable, -Verbose, -WarningAction, and -WarningVariable.",
        "",
        "## RELATED LINKS",
        "",
    ]
    return "\n".join(out)


HELP: dict[str, str] = {
    "help/Internal links.md": """---
aliases: [wikilinks]
---
# Internal links

Learn how to link to notes, attachments, and other files from your notes, using internal links. By linking notes you create a network of knowledge.

## Supported formats for internal links
Obsidian supports the following link formats: Wikilink `[[Three laws of motion]]` and Markdown `[Three laws of motion](Three%20laws%20of%20motion.md)`.

## Link to a heading in a note
You can link to specific headings in notes, also known as anchor links. To link to a heading, add a hash sign (`#`) at the end of the link destination, followed by the heading text: `[[Example#Details]]`. Add multiple hash signs for each subheading: `[[Help and support#Questions and advice#Report bugs]]`.

## Link to a block in a note
A block is a unit of text in your note, such as a paragraph, block quote, or list item. To link to a block, add `#^` at the end of the link destination followed by a unique block identifier.

## Change the link display text
By default, Obsidian displays the link text. Add a vertical bar (`|`) to change it: `[[Example|Custom name]]`.
""",
    "help/Embed files.md": """# Embed files

You can embed files in your notes, such as images, audio, video and PDF files, and other notes. To embed a file, add an exclamation mark (`!`) in front of an internal link: `![[Engelbart.jpg]]`.

## Embed an image in a note
`![[Engelbart.jpg]]` shows the picture inline. Change the image dimensions by adding `|640x480` or a width only: `![[Engelbart.jpg|100]]`.

## Embed a PDF
`![[Document.pdf#page=3]]` opens the PDF at a given page.

## Embed a note or a section
`![[Internal links#Link to a heading in a note]]` embeds one section of another note.
""",
    "help/Basic formatting syntax.md": """# Basic formatting syntax

Learn how to apply basic formatting to your notes, using Markdown.

## Paragraphs and line breaks
Use a blank line between lines of text to create paragraphs.

## Headings
To create a heading, add up to six `#` symbols before your heading text.

## Bold, italics, highlights
`**Bold text**`, `*Italic text*`, `==Highlighted text==`, `~~Striked out text~~`.

## Lists
Create an unordered list by adding a `-`, `*`, or `+` before the text; ordered lists start with a number. Task lists use `- [ ]`.

## Footnotes
You can add footnotes to your notes using the following syntax: `This is a simple footnote[^1].` and later `[^1]: This is the referenced text.`

## Code
Format code inline with single backticks, or as a code block with three backticks and the language name for syntax highlighting.
""",
    "help/Advanced formatting syntax.md": """# Advanced formatting syntax

Learn how to add advanced formatting syntax to your notes.

## Tables
You can create tables using vertical bars (`|`) to separate columns and hyphens (`-`) to define headers.

## Diagram
You can add diagrams and charts to your notes, using Mermaid. Mermaid supports a range of diagrams, such as flow charts, sequence diagrams, and timelines. To add a Mermaid diagram, create a `mermaid` code block.

## Math
You can add math expressions to your notes using MathJax and the LaTeX notation. To add a math expression in a block, surround it with `$$`: `$$\\begin{vmatrix}a & b\\\\ c & d\\end{vmatrix}=ad-bc$$`. Inline math uses single dollar signs: `$e^{2i\\pi} = 1$`. For more information about the syntax, refer to the MathJax basic tutorial and quick reference.
""",
    "help/Callouts.md": """# Callouts

Use callouts to include additional content without breaking the flow of your notes. To create a callout, add `[!info]` to the first line of a blockquote, where `info` is the type identifier.

## Foldable callouts
You can make a callout foldable by adding a plus (+) or a minus (-) directly after the type identifier.

## Supported types
note, abstract, info, todo, tip, success, question, warning, failure, danger, bug, example, quote.
""",
    "help/Tags.md": """# Tags

Tags are keywords or topics that help you quickly find the notes you want. To create a tag, enter a hashtag symbol (#) in the editor, followed by a keyword: `#meeting`.

## Nested tags
Nested tags define tag hierarchies that make it easier to find and filter related tags. Create nested tags by using forward slashes (`/`) in the tag name, for example `#inbox/to-read` and `#inbox/processing`.

## Tag format
Tags are case-insensitive and may contain letters, numbers, underscores, hyphens and forward slashes; a tag must contain at least one non-numerical character.
""",
    "help/Aliases.md": """# Aliases

If you want to reference a file by different names, consider adding aliases to the note. An alias is an alternative name for a note.

## Add an alias to a note
To add an alias for a note, add an `aliases` property in the note properties: a list of alternative names, for example the abbreviation AI for Artificial intelligence.

## Link to a note using an alias
When you type an internal link, the aliases appear in the suggestions, and the link uses the alias as display text.
""",
    "help/Properties.md": """# Properties

Properties allow you to organize information about a note. Properties contain structured data such as text, links, dates, checkboxes, and numbers. Properties are stored in YAML format at the top of the file, a section called frontmatter.

## Add a property to a note
Use the Add file property command, or type `---` at the very beginning of a file.

## Property types
Text, List, Number, Checkbox, Date, Date & time. Default properties: tags, aliases, cssclasses.
""",
    "help/Templates.md": """# Templates

Templates lets you insert pre-defined snippets of text into your active note.

## Set your template folder
In Settings, under Core plugins, enable Templates and choose the folder that holds your template files.

## Insert a template into the active note
In the ribbon, click Insert template, then choose the template to insert at the cursor position. Template variables such as `{{date}}` and `{{title}}` are replaced when the template is inserted.
""",
    "help/Daily notes.md": """# Daily notes

Daily notes opens a note based on today's date, or creates it if it doesn't exist. Use daily notes to create journals, to-do lists, or daily logs.

## Open today's daily note
Click Open today's daily note in the ribbon, or run the command from the command palette. To open the daily note on startup, turn on the setting.

## Date format
Choose the date format used for the file name, for example YYYY-MM-DD.
""",
    "help/Hotkeys.md": """# Hotkeys

Hotkeys let you use keyboard shortcuts to run commands quickly. To change a hotkey, open Settings and select Hotkeys, then search for the command and click the plus icon to assign a key combination.

## Default hotkeys
Ctrl+P opens the command palette, Ctrl+O the quick switcher, Ctrl+E toggles reading view.
""",
    "help/Sync your notes across devices.md": """# Sync your notes across devices

Keep your notes in sync between your phone, tablet and computer. Obsidian Sync is end-to-end encrypted; alternatives are iCloud, a file synchronization service, or Git.

## Set up Sync on a new device
Install the app on the phone, sign in, and connect to the remote vault.

## Conflicts
When a file changes on two devices before they sync, both versions are merged where possible.
""",
    "help/Search.md": """# Search

The search plugin lets you find files in your vault that match a search term.

## Search operators
Use operators to refine a search term: `file:` finds text in the file name, `path:` matches the path of the file, `content:` searches the text only, `tag:` finds a tag, `line:` and `section:` match within one line or section. Combine terms with OR and exclude with a minus sign.

## Regular expressions
Enclose a regular expression in forward slashes: `/\\d{4}-\\d{2}/`.
""",
    "help/Backlinks.md": """# Backlinks

With backlinks, you can see all the notes that link to the active note. A backlink is a link from another note to this one.

## Show backlinks
Open the Backlinks view in the right sidebar; unlinked mentions list notes that contain the note's name without linking to it.
""",
    "help/CSS snippets.md": """# CSS snippets

Learn how to modify aspects of the application's appearance without having to build a theme. CSS snippets are small pieces of CSS that change the look of the interface.

## Add a CSS snippet
Place a `.css` file in the snippets folder of the configuration folder, then turn it on in Settings, Appearance.
""",
    "help/Import from Notion.md": """# Import from Notion

You can convert your data from Notion into Markdown files with the Importer plugin.

## Export your Notion data
In Notion, open Settings and members, choose Export all workspace content as HTML, then run the importer on the zip file.
""",
    "help/Command palette.md": """# Command palette

The command palette lets you run commands by typing their names. Open it with Ctrl+P and start typing.

## Pin commands
Pin frequently used commands to the top of the list.
""",
    "help/Graph view.md": """# Graph view

Graph view lets you visualize the relationships between the notes in your vault. Circles represent notes, and lines represent internal links between two notes.

## Local graph
The local graph shows notes connected to the active note.
""",
    "help/Canvas.md": """# Canvas

Canvas is a core plugin for visual note-taking: an infinite space to lay out notes, cards, images and web pages, and connect them with lines.

## Add cards
Drag notes from the file explorer onto the canvas, or double-click to add a text card.
""",
    "help/Bookmarks.md": """# Bookmarks

Bookmarks let you save notes, searches, headings and blocks you want to return to later.

## Bookmark a search
Run a search and choose Bookmark to save the query.
""",
}

TEAM: dict[str, str] = {
    "team/runbooks/Rotate database credentials.md": """---
aliases: [password rotation, db secret rotation]
owner: platform
---
# Rotate database credentials

Every 90 days the platform team replaces the application's database login.

## Steps
1. Create the new login in the database with the same grants.
2. Store it in the team vault and update the application settings.
3. Restart the workers one at a time and check the error rate.
4. Drop the old login after a day.
""",
    "team/runbooks/Deploy to production.md": """---
owner: platform
---
# Deploy to production

How a change goes live. Deploys happen from the main branch through the pipeline only.

## Before
Check that the build is green and that the change has a reviewer.

## During
Watch the dashboard for five minutes after the rollout reaches every region.

## Rollback
Re-run the pipeline with the previous build number.
""",
    "team/handbook/On-call handbook.md": """# On-call handbook

What the person on call does, day and night.

## Paging
The pager escalates after ten minutes without an acknowledgement.

## Severity levels
- SEV1: customers cannot use the product; all hands.
- SEV2: a major feature is broken for many customers.
- SEV3: a minor feature is degraded; fix during working hours.

## Handover
Write a short summary of open incidents for the next person.
""",
    "team/handbook/Release process.md": """# Release process

Releases leave every second Tuesday. The release manager walks through the release checklist with the team: changelog written, version bumped, migration reviewed, announcement drafted.

## Hotfixes
A hotfix skips the train but not the checklist.
""",
    "team/handbook/Onboarding.md": """---
aliases: [new starter guide]
---
# Onboarding

Welcome! Your first week, step by step.

## Laptop setup
Install the developer tools, clone the repositories and ask IT for access to the cloud subscription.

## People to meet
Your buddy, your manager, and the on-call engineer of the week.
""",
    "team/handbook/Expense policy.md": """# Expense policy

Travel, meals and equipment: what the company pays for and how to claim it.

## Claims
Submit receipts within 30 days. Claims over 500 need your manager's approval.
""",
}

# words that every team writes about: the filler notes are made of them
FILLER_WORDS = (
    "team project review update deploy release meeting notes action items customer feedback plan "
    "sprint backlog priority owner status risk timeline budget design document decision follow "
    "azure resource group subscription account virtual machine secret key vault storage network "
    "production staging incident error rate dashboard pipeline build test heading link template "
    "tag note property search sync phone create delete get set new remove"
).split()


def write(root: Path) -> Path:
    """Write the corpus under `root` (created) and return `root`."""
    files: dict[str, str] = {}
    for module, name, synopsis, desc, params, example in CMDLETS:
        files[f"reference/{module}/{name}.md"] = _cmdlet_page(
            module, name, synopsis, desc, params, example, accounts=module == "Az.Accounts"
        )
    for i, version in enumerate(VERSIONS):
        for name, synopsis, desc, params, example in KEYVAULT:
            if name in NEW_IN_LAST and i < len(VERSIONS) - 1:
                continue
            extra = "" if i == 0 else f" This page was updated for {version}."
            files[f"reference/{version}/Az.KeyVault/{name}.md"] = _cmdlet_page(
                "Az.KeyVault", name, synopsis, desc + extra, params, example, version=version
            )
    files.update(HELP)
    files.update(TEAM)
    rnd = random.Random(17)
    for i in range(160):
        day = f"2026-{1 + i % 12:02d}-{1 + i % 28:02d}"
        title = f"{day} {rnd.choice(['Weekly sync', 'Planning', 'Retro', 'Standup', 'Review'])} {i}"
        body = []
        for _ in range(rnd.randint(3, 8)):
            body.append(" ".join(rnd.choice(FILLER_WORDS) for _ in range(rnd.randint(8, 20))).capitalize() + ".")
        files[f"meetings/{title}.md"] = f"# {title}\n\n## Notes\n" + "\n".join(body) + "\n"
    root.mkdir(parents=True, exist_ok=True)
    for rel, text in files.items():
        target = root / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    return root
