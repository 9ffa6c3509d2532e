import { ApiPropertyOptional } from '@nestjs/swagger';
import { Allow, ValidateBy } from 'class-validator';
import { OptionalText, RequiredText } from '../../common/validation.js';
import type { OnExpiry } from '../entities/vm-lease.entity.js';
import { LeaseExpiresAt, LeaseTtl, OnExpiryMember } from './lease.dto.js';

const NODE_OR_HOSTNAME = 'exactly one of node or hostname is required';

interface NodeRefFields {
  node?: unknown;
  hostname?: unknown;
}

/**
 * Sits on `node` and checks the pair: exactly one of `node` and `hostname`, and `node`, when it is the
 * one, a string of 1..255 characters (`hostname` has its own checks).
 */
function IsNodeOrHostname(): PropertyDecorator {
  return ValidateBy({
    name: 'isNodeOrHostname',
    validator: {
      validate: (_value: unknown, args): boolean => {
        const { node, hostname } = args?.object as NodeRefFields;
        if ((node === undefined) === (hostname === undefined)) {
          return false;
        }
        return node === undefined || (typeof node === 'string' && node.length >= 1 && node.length <= 255);
      },
      defaultMessage: (args): string => {
        const { node, hostname } = args?.object as NodeRefFields;
        return (node === undefined) === (hostname === undefined)
          ? NODE_OR_HOSTNAME
          : 'node must be a string of 1 to 255 characters';
      },
    },
  });
}

/** `node` (an id) or `hostname` (a node name or IP address): exactly one. */
export class NodeRefDto {
  @IsNodeOrHostname()
  @ApiPropertyOptional({
    type: String,
    example: '3',
    description: 'Node id; exactly one of node and hostname',
    maxLength: 255,
  })
  node?: string;

  @OptionalText(1, 255, 'cloud', 'Name or IP address of the node, instead of node')
  hostname?: string;
}

/** Body of `vm/stop`. */
export class StopNodeDto extends NodeRefDto {}

/** Body of `vm/reboot`, `vm/poweroff` and `vm/poweron`. */
export class PowerNodeDto extends NodeRefDto {}

/** `emulate` of assign and release: only `true` and `"True"` count. */
const EMULATE = ApiPropertyOptional({
  oneOf: [{ type: 'boolean' }, { type: 'string' }],
  example: true,
  description:
    'true or "True": validate the body, then answer the fixed documented reply without looking the node up or ' +
    'touching the assignment facility (for automatic documentation). Any other value is ignored.',
});

/** Body of `vm/action/release`. */
export class ReleaseNodeDto extends NodeRefDto {
  @Allow()
  @EMULATE
  emulate?: unknown;
}

/** Body of `vm/action/assign`. */
export class AssignNodeDto extends NodeRefDto {
  @RequiredText(1, 255, 'fake_test', 'User the node is assigned to')
  user!: string;

  @RequiredText(1, 255, 'test', 'Name of the application the node is attached to')
  vm_type!: string;

  @LeaseTtl(false)
  ttl_seconds?: number;

  @LeaseExpiresAt()
  expires_at?: string;

  @OnExpiryMember()
  on_expiry?: OnExpiry;

  @Allow()
  @EMULATE
  emulate?: unknown;
}

/** Body of `vm/action/extend`: the node and the new end of its lease. */
export class ExtendLeaseDto extends NodeRefDto {
  @LeaseTtl(true)
  ttl_seconds?: number;

  @LeaseExpiresAt()
  expires_at?: string;
}

/** True for the two values of `emulate` the original system honoured. */
export function isEmulated(emulate: unknown): boolean {
  return emulate === true || emulate === 'True';
}
