import type { IdentityDto } from './dto.js';
import type { IdentityEntity } from './entities/identity.entity.js';

export function toIdentityDto(identity: IdentityEntity): IdentityDto {
  return {
    provider: identity.provider,
    subject: identity.subject,
    username: identity.username,
    email: identity.email,
    linked_at: identity.linkedAt.toISOString(),
    last_used_at: identity.lastUsedAt?.toISOString() ?? null,
  };
}
