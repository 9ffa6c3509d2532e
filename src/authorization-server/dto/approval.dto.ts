import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { EXAMPLE } from '../../common/openapi-examples.js';
import type { ApplicationAccess } from '../approvals.js';

export class ApprovalDto {
  @ApiProperty({ example: EXAMPLE.appClientId })
  client_id!: string;

  @ApiProperty({ example: 'Workflow dashboard', description: 'The name its owner registered it under' })
  client_name!: string;

  @ApiProperty({
    type: [String],
    example: ['workflow.read', 'user.profile'],
    description: 'What it may do for the caller: the scopes of every approval in force',
  })
  scopes!: string[];

  @ApiProperty({
    format: 'date-time',
    example: '2026-11-24T00:15:00.000Z',
    description: 'The first approval in force',
  })
  granted_at!: string;

  @ApiPropertyOptional({
    format: 'date-time',
    example: '2026-11-25T09:40:00.000Z',
    description: 'When it last got tokens (a code exchanged, a refresh); absent when it has not yet',
  })
  last_used_at?: string;
}

export class ApprovalListDto {
  @ApiProperty({ type: ApprovalDto, isArray: true })
  items!: ApprovalDto[];
}

export function toApprovalResponse(access: ApplicationAccess): ApprovalDto {
  return {
    client_id: access.clientId,
    client_name: access.clientName,
    scopes: access.scopes,
    granted_at: access.grantedAt.toISOString(),
    ...(access.lastUsedAt ? { last_used_at: access.lastUsedAt.toISOString() } : {}),
  };
}
