import { Injectable } from '@nestjs/common';

/** The time, injected so that rules with a duration can be tested without waiting. */
@Injectable()
export class Clock {
  nowMs(): number {
    return Date.now();
  }
}
