import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsBoolean, IsOptional, ValidateBy, ValidateIf, type ValidationOptions } from 'class-validator';
import { OptionalText, RequiredText } from '../../common/validation.js';
import { isRecord } from '../../common/is-record.js';

// Nova's limits on server metadata, applied to every cloud so that a request valid on one is valid on all.
const MAX_METADATA_ITEMS = 128;
const MAX_METADATA_TEXT = 255;

/** A JSON object of at most 128 string values, keys and values 1..255 / 0..255 characters (Nova's rule). */
function IsMetadata(options?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: 'isMetadata',
      validator: {
        validate: (value: unknown): boolean =>
          isRecord(value) &&
          Object.keys(value).length <= MAX_METADATA_ITEMS &&
          Object.entries(value).every(
            ([key, item]) =>
              key.length >= 1 &&
              key.length <= MAX_METADATA_TEXT &&
              typeof item === 'string' &&
              item.length <= MAX_METADATA_TEXT,
          ),
        defaultMessage: () =>
          `metadata must be an object of at most ${MAX_METADATA_ITEMS} string values (keys and values up to ${MAX_METADATA_TEXT} characters)`,
      },
    },
    options,
  );
}

/** Body of `vm/start`; unknown members (`auth_token`, …) are ignored. */
export class StartNodeDto {
  @RequiredText(1, 255, 'cloud', 'Name of the new node')
  name!: string;

  @RequiredText(1, 255, '1', 'Id of an image of the cloud (see the images operation)')
  image!: string;

  @RequiredText(1, 255, '1', 'Id of a size (flavor) of the cloud (see the sizes operation)')
  size!: string;

  @OptionalText(1, 255, 'mykey', 'Name of an SSH key pair known to the cloud')
  keyname?: string;

  @IsOptional()
  @IsMetadata()
  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: { type: 'string' },
    example: { purpose: 'test' },
    description: 'Free-form metadata: an object of string values (at most 128, up to 255 characters each)',
  })
  metadata?: Record<string, string>;

  // Not IsOptional, which would let null through: only an absent member means false.
  @ValidateIf((body: StartNodeDto) => body.async !== undefined)
  @IsBoolean({ message: 'async must be true or false' })
  @ApiPropertyOptional({
    type: Boolean,
    default: false,
    example: false,
    description:
      "true: answer 202 with a job at once and start the node in the background (follow it at the job's href)",
  })
  async?: boolean;
}
